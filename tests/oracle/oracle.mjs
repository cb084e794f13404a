#!/usr/bin/env node
// piconv's test oracle: load a pi session file with pi 1.6.0's own SessionManager and print
// one JSON object describing what pi sees (header, leaf, context) plus the OpenAI Chat
// Completions and Responses conversions pi-ai would send.
//
// Extended copy of ../shared/tools/pi-oracle/oracle.mjs. With no target options the output
// is identical to that script's (same keys, same fixed gpt-4o model and compat). Additions:
//
//   --target PROVIDER/MODEL  take the model from pi-ai's built-in catalog (getBuiltinModel);
//                            the first "/" splits, so openrouter/openai/gpt-4o works.
//   --model-json '{...}'     fields merged over the model (the catalog's with --target, else the
//                            default gpt-4o); a "compat" object here is merged into model.compat.
//                            Without an explicit "api" the chat conversion uses
//                            api "openai-completions" and the Responses one "openai-responses".
//   --compat KEY=VALUE       repeatable; sets model.compat[KEY] (VALUE JSON-parsed when it
//                            parses, else the string). The effective compat is then resolved the
//                            way pi-ai does it (detectCompat + model.compat overrides).
//   --leaf ID                move the leaf before building the context (SessionManager.branch).
//   --list-leaves            print {"leaves": [...]} only: ids of entries no entry names as parent,
//                            in file order.
//   --usage                  print {"usage": {...}} only: the token and cost totals pi shows of the
//                            session, each by pi's own code: "exportHeader" (the header of
//                            `pi --export`'s page: computeStats of export-html/template.js, run as
//                            it is), "sessionStats" (`/session`: AgentSession.getSessionStats, or
//                            {"error"} where it throws) and "breakdown" (`/session`'s cost by
//                            model: getUsageCostBreakdown).
//   --list-all DIR           no session file: print {"count", "elapsedMs"} of pi's
//                            SessionManager.listAll() over DIR (as pi's session directory).
//   --deterministic-ids      v1 migration ids become 00000001, 00000002, ... (see below).
//   --pretty                 indent the JSON.
//   --batch                  read a JSON array of argument lists from stdin and print one JSON line
//                            per job (saves Node start-up and pi's imports per file).
//
// When any of --target/--model-json/--compat is given the output has one more key, "target":
// {chatModel, chatCompat, responsesModel, responsesOptions}, so tests can see what was used.
//
// The input file is never touched: pi's loader appends a newline to a file without one, and
// rewrites v1/v2 files after migrating them, so the oracle opens a private temporary copy.
import { createRequire, syncBuiltinESMExports } from "node:module";
import { copyFileSync, mkdtempSync, rmSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const USAGE =
  "usage: oracle.mjs [--deterministic-ids] [--pretty] [--target PROVIDER/MODEL] [--model-json JSON]\n" +
  "                  [--compat KEY=VALUE]... [--leaf ID] [--list-leaves | --usage] <session.jsonl>\n" +
  "       oracle.mjs --list-all SESSIONS_DIR\n" +
  "       oracle.mjs --batch < JOBS.json   (a JSON array of argument lists)\n";

// A bad command line (or --leaf/--target naming nothing): exit 2, or an "oracleError" line in
// --batch mode.
class UsageError extends Error {}
function fail(message) {
  throw new UsageError(message);
}

function parseArgs(argv) {
  const opts = {
    deterministic: false,
    pretty: false,
    listLeaves: false,
    usage: false,
    batch: false,
    compat: {},
    file: undefined,
  };
  const takesValue = new Set(["--target", "--model-json", "--compat", "--leaf", "--list-all"]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (takesValue.has(arg)) {
      if (i + 1 >= argv.length) fail(`${arg} needs a value`);
      const value = argv[++i];
      if (arg === "--target") {
        const slash = value.indexOf("/");
        if (slash <= 0 || slash === value.length - 1) fail(`--target wants PROVIDER/MODEL, got ${value}`);
        opts.target = { provider: value.slice(0, slash), id: value.slice(slash + 1) };
      } else if (arg === "--model-json") {
        try {
          opts.modelJson = JSON.parse(value);
        } catch (error) {
          fail(`--model-json is not JSON: ${error.message}`);
        }
        if (!opts.modelJson || typeof opts.modelJson !== "object" || Array.isArray(opts.modelJson)) {
          fail("--model-json must be a JSON object");
        }
      } else if (arg === "--compat") {
        const eq = value.indexOf("=");
        if (eq <= 0) fail(`--compat wants KEY=VALUE, got ${value}`);
        const raw = value.slice(eq + 1);
        let parsed;
        try {
          parsed = JSON.parse(raw);
        } catch {
          parsed = raw;
        }
        opts.compat[value.slice(0, eq)] = parsed;
      } else if (arg === "--leaf") {
        opts.leaf = value;
      } else if (arg === "--list-all") {
        opts.listAll = value;
      }
    } else if (arg === "--deterministic-ids") {
      opts.deterministic = true;
    } else if (arg === "--pretty") {
      opts.pretty = true;
    } else if (arg === "--list-leaves") {
      opts.listLeaves = true;
    } else if (arg === "--usage") {
      opts.usage = true;
    } else if (arg === "--batch") {
      opts.batch = true;
    } else if (arg.startsWith("--")) {
      fail(`unknown option ${arg}`);
    } else if (opts.file === undefined) {
      opts.file = arg;
    } else {
      fail(`more than one file given (${opts.file}, ${arg})`);
    }
  }
  if (!opts.file && !opts.batch && !opts.listAll) fail("no session file given");
  return opts;
}

let cliOpts;
try {
  cliOpts = parseArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`oracle.mjs: ${error.message}\n${USAGE}`);
  process.exit(2);
}

// v1 files get fresh ids from crypto.randomUUID().slice(0, 8) during migration.
// With --deterministic-ids the ids become 00000001, 00000002, ... so output is stable; the
// counter restarts for every file (also in --batch mode), so ids follow file order.
// The patch must be in place before pi is imported (it binds randomUUID at import).
const require = createRequire(import.meta.url);
const nodeCrypto = require("node:crypto");
const originalRandomUUID = nodeCrypto.randomUUID;
const idCounter = { deterministic: false, n: 0 };
nodeCrypto.randomUUID = (...args) => {
  if (!idCounter.deterministic) return originalRandomUUID.apply(nodeCrypto, args);
  idCounter.n += 1;
  const hex = idCounter.n.toString(16).padStart(8, "0");
  return `${hex}-0000-4000-8000-000000000000`;
};
syncBuiltinESMExports();

const { SessionManager, convertToLlm } = await import("@earendil-works/pi-coding-agent");
const ai = await import("@earendil-works/pi-ai");
const { normalizeContext } = ai;
const { convertMessages } = await import("@earendil-works/pi-ai/api/openai-completions");
const { convertResponsesMessages } = await import("@earendil-works/pi-ai/api/openai-responses-shared");
const { createGrammarToolInputProperties } = await import("@earendil-works/pi-ai/api/constrained-sampling");
const { getDeclaredTools } = await import("@earendil-works/pi-ai/utils/transcript");
const { getBuiltinModel } = await import("@earendil-works/pi-ai/providers/all");

// ---------------------------------------------------------------------------------------------
// Ported from pi-ai 1.6.0 dist/api/openai-completions.js (detectCompat, getCompat) and
// dist/api/openai-responses.js (getCompat, detectSessionAffinityFormat). pi-ai does not export
// these functions (only the stream functions call them), so they are copied verbatim here.
// When the pinned pi-ai version changes, re-copy them.
// ---------------------------------------------------------------------------------------------
function detectCompat(model) {
  const provider = model.provider;
  const baseUrl = model.baseUrl;
  const isZai =
    provider === "zai" || provider === "zai-coding-cn" || baseUrl.includes("api.z.ai") || baseUrl.includes("open.bigmodel.cn");
  const isTogether = provider === "together" || baseUrl.includes("api.together.ai") || baseUrl.includes("api.together.xyz");
  const isMoonshot = provider === "moonshotai" || provider === "moonshotai-cn" || baseUrl.includes("api.moonshot.");
  const isOpenRouter = provider === "openrouter" || baseUrl.includes("openrouter.ai");
  const isCloudflareWorkersAI = provider === "cloudflare-workers-ai" || baseUrl.includes("api.cloudflare.com");
  const isCloudflareAiGateway = provider === "cloudflare-ai-gateway" || baseUrl.includes("gateway.ai.cloudflare.com");
  const isNvidia = provider === "nvidia" || baseUrl.includes("integrate.api.nvidia.com");
  const isAntLing = provider === "ant-ling" || baseUrl.includes("api.ant-ling.com");
  const isCerebras = provider === "cerebras" || baseUrl.includes("cerebras.ai");
  const isDeepSeek = provider === "deepseek" || baseUrl.toLowerCase().includes("deepseek.com");
  const isNonStandard =
    isNvidia ||
    isCerebras ||
    provider === "xai" ||
    baseUrl.includes("api.x.ai") ||
    isTogether ||
    baseUrl.includes("chutes.ai") ||
    isDeepSeek ||
    isZai ||
    isMoonshot ||
    provider === "opencode" ||
    baseUrl.includes("opencode.ai") ||
    isCloudflareWorkersAI ||
    isCloudflareAiGateway ||
    isAntLing;
  const useMaxTokens =
    baseUrl.includes("chutes.ai") || isDeepSeek || isMoonshot || isCloudflareAiGateway || isTogether || isNvidia || isAntLing || isZai;
  const isGrok = provider === "xai" || baseUrl.includes("api.x.ai");
  const isOpenAI = provider === "openai" || baseUrl.includes("api.openai.com");
  const cacheControlFormat = provider === "openrouter" && model.id.startsWith("anthropic/") ? "anthropic" : undefined;
  return {
    supportsStore: !isNonStandard,
    supportsDeveloperRole: isOpenAI,
    supportsReasoningEffort:
      !isGrok && !isZai && !isMoonshot && !isTogether && !isCloudflareAiGateway && !isNvidia && !isAntLing,
    supportsUsageInStreaming: true,
    supportsFinishReason: true,
    maxTokensField: useMaxTokens ? "max_tokens" : "max_completion_tokens",
    requiresToolResultName: false,
    requiresAssistantAfterToolResult: false,
    requiresNonNullAssistantContent: false,
    requiresToolsWithToolHistory: false,
    requiresThinkingAsText: false,
    requiresReasoningContentOnAssistantMessages: isDeepSeek,
    thinkingFormat: isDeepSeek
      ? "deepseek"
      : isZai
        ? "zai"
        : isTogether
          ? "together"
          : isAntLing
            ? "ant-ling"
            : isOpenRouter
              ? "openrouter"
              : "openai",
    openRouterRouting: {},
    vercelGatewayRouting: {},
    chatTemplateKwargs: {},
    chatTemplateArgs: {},
    zaiToolStream: false,
    supportsThinkingTokenBudget: false,
    thinkingTokenBudgetField: undefined,
    supportsStrictMode: false,
    supportsOpenAIGrammarTools: false,
    supportsMidConvoSystemMessages: false,
    supportsMidConvoToolAdditions: false,
    cacheControlFormat,
    sendSessionAffinityHeaders: isOpenRouter,
    sessionAffinityFormat: isOpenRouter ? "openrouter" : "openai",
    supportsLongCacheRetention: !(isTogether || isCloudflareWorkersAI || isCloudflareAiGateway || isNvidia || isAntLing),
  };
}

function getChatCompat(model) {
  const detected = detectCompat(model);
  if (!model.compat) return detected;
  const c = model.compat;
  return {
    supportsStore: c.supportsStore ?? detected.supportsStore,
    supportsDeveloperRole: c.supportsDeveloperRole ?? detected.supportsDeveloperRole,
    supportsReasoningEffort: c.supportsReasoningEffort ?? detected.supportsReasoningEffort,
    supportsUsageInStreaming: c.supportsUsageInStreaming ?? detected.supportsUsageInStreaming,
    supportsFinishReason: c.supportsFinishReason ?? detected.supportsFinishReason,
    maxTokensField: c.maxTokensField ?? detected.maxTokensField,
    requiresToolResultName: c.requiresToolResultName ?? detected.requiresToolResultName,
    requiresAssistantAfterToolResult: c.requiresAssistantAfterToolResult ?? detected.requiresAssistantAfterToolResult,
    requiresNonNullAssistantContent: c.requiresNonNullAssistantContent ?? detected.requiresNonNullAssistantContent,
    requiresToolsWithToolHistory: c.requiresToolsWithToolHistory ?? detected.requiresToolsWithToolHistory,
    requiresThinkingAsText: c.requiresThinkingAsText ?? detected.requiresThinkingAsText,
    requiresReasoningContentOnAssistantMessages:
      c.requiresReasoningContentOnAssistantMessages ?? detected.requiresReasoningContentOnAssistantMessages,
    thinkingFormat: c.thinkingFormat ?? detected.thinkingFormat,
    openRouterRouting: c.openRouterRouting ?? {},
    vercelGatewayRouting: c.vercelGatewayRouting ?? detected.vercelGatewayRouting,
    chatTemplateKwargs: c.chatTemplateKwargs ?? detected.chatTemplateKwargs,
    chatTemplateArgs: c.chatTemplateArgs ?? detected.chatTemplateArgs,
    zaiToolStream: c.zaiToolStream ?? detected.zaiToolStream,
    supportsThinkingTokenBudget: c.supportsThinkingTokenBudget ?? detected.supportsThinkingTokenBudget,
    thinkingTokenBudgetField: c.thinkingTokenBudgetField ?? detected.thinkingTokenBudgetField,
    supportsStrictMode: c.supportsStrictMode ?? detected.supportsStrictMode,
    supportsOpenAIGrammarTools: c.supportsOpenAIGrammarTools ?? detected.supportsOpenAIGrammarTools,
    supportsMidConvoSystemMessages: c.supportsMidConvoSystemMessages ?? detected.supportsMidConvoSystemMessages,
    supportsMidConvoToolAdditions: c.supportsMidConvoToolAdditions ?? detected.supportsMidConvoToolAdditions,
    cacheControlFormat: c.cacheControlFormat ?? detected.cacheControlFormat,
    sendSessionAffinityHeaders: c.sendSessionAffinityHeaders ?? detected.sendSessionAffinityHeaders,
    sessionAffinityFormat: c.sessionAffinityFormat ?? detected.sessionAffinityFormat,
    supportsLongCacheRetention: c.supportsLongCacheRetention ?? detected.supportsLongCacheRetention,
    promptCacheKeyMode: c.promptCacheKeyMode,
    vllmPriority: c.vllmPriority,
  };
}

function detectSessionAffinityFormat(model) {
  return model.provider === "openrouter" || model.baseUrl.includes("openrouter.ai") ? "openrouter" : "openai";
}

function getResponsesCompat(model) {
  return {
    supportsDeveloperRole: model.compat?.supportsDeveloperRole ?? true,
    supportsMidConvoSystemMessages: model.compat?.supportsMidConvoSystemMessages ?? false,
    sessionAffinityFormat: model.compat?.sessionAffinityFormat ?? detectSessionAffinityFormat(model),
    promptCacheKeyMode: model.compat?.promptCacheKeyMode ?? "auto",
    supportsLongCacheRetention: model.compat?.supportsLongCacheRetention ?? true,
    supportsStrictMode: model.compat?.supportsStrictMode ?? false,
    supportsOpenAIGrammarTools: model.compat?.supportsOpenAIGrammarTools ?? false,
    supportsAdditionalTools: model.compat?.supportsAdditionalTools ?? false,
    supportsToolSearch: model.compat?.supportsToolSearch ?? false,
    supportsExplicitPromptCacheMode: model.compat?.supportsExplicitPromptCacheMode ?? false,
    supportsMaxOutputTokens: model.compat?.supportsMaxOutputTokens ?? true,
    supportsMidConvoEffort: model.compat?.supportsMidConvoEffort ?? false,
  };
}
// --------------------------------------------------------------------------------------------

// The default model: a plain OpenAI gpt-4o description, as in the shared oracle. It has no
// compat member, so getChatCompat() returns detectCompat()'s values for api.openai.com, which
// are exactly the shared oracle's hard-coded chatCompat.
const defaultModel = {
  id: "gpt-4o",
  name: "gpt-4o",
  api: "openai-completions",
  provider: "openai",
  baseUrl: "https://api.openai.com/v1",
  reasoning: false,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 16384,
};

function attempt(fn) {
  try {
    return fn();
  } catch (error) {
    return { error: String(error && error.stack ? error.stack.split("\n")[0] : error) };
  }
}

function buildModels(opts) {
  let base = defaultModel;
  if (opts.target) {
    const found = getBuiltinModel(opts.target.provider, opts.target.id);
    if (!found) {
      fail(`pi-ai's catalog has no model ${opts.target.provider}/${opts.target.id}; use --model-json instead`);
    }
    // structuredClone: never mutate the catalog's shared object.
    base = structuredClone(found);
  }
  const { compat: jsonCompat, ...jsonRest } = opts.modelJson ?? {};
  const explicitApi = opts.modelJson && Object.hasOwn(opts.modelJson, "api");
  const compat = { ...(base.compat ?? {}), ...(jsonCompat ?? {}), ...opts.compat };
  const merged = { ...base, ...jsonRest };
  if (Object.keys(compat).length > 0) merged.compat = compat;
  else delete merged.compat;
  const chat = { ...merged, api: explicitApi ? merged.api : "openai-completions" };
  const responses = { ...merged, api: explicitApi ? merged.api : "openai-responses" };
  return { chat, responses };
}

// pi's usage figures of a session, each computed by pi's own code (see --usage above).
const piDist = new URL("./node_modules/@earendil-works/pi-coding-agent/dist/", import.meta.url);
const { getUsageCostBreakdown } = await import(new URL("core/usage-totals.js", piDist).href);
const { AgentSession } = await import("@earendil-works/pi-coding-agent");
const templateSource = readFileSync(new URL("core/export-html/template.js", piDist), "utf8");
const computeStatsSource = templateSource.match(/function computeStats\(entryList\) \{[\s\S]*?\n      \}\n/);
if (!computeStatsSource) throw new Error("computeStats not found in pi's export-html/template.js");
const computeStats = new Function(`${computeStatsSource[0]}; return computeStats;`)();

function usageOf(sm) {
  const entries = sm.getEntries();
  const header = attempt(() => computeStats(entries));
  const sessionStats = attempt(() => {
    const stats = AgentSession.prototype.getSessionStats.call({
      sessionManager: sm,
      sessionFile: undefined,
      sessionId: sm.getSessionId(),
      getContextUsage: () => undefined,
    });
    return { tokens: stats.tokens, cost: stats.cost, userMessages: stats.userMessages };
  });
  return {
    exportHeader: header.error
      ? header
      : { tokens: header.tokens, cost: header.cost.total, userMessages: header.userMessages },
    sessionStats,
    breakdown: attempt(() => getUsageCostBreakdown(entries)),
  };
}

async function listAll(dir) {
  // listAll() reads the session directory of pi's agent directory: point one at DIR.
  const agent = mkdtempSync(join(tmpdir(), "pi-oracle-agent-"));
  try {
    symlinkSync(dir, join(agent, "sessions"), "dir");
    process.env.PI_CODING_AGENT_DIR = agent;
    const t0 = performance.now();
    const sessions = await SessionManager.listAll();
    return { count: sessions.length, elapsedMs: performance.now() - t0 };
  } finally {
    rmSync(agent, { recursive: true, force: true });
  }
}

function runOne(opts) {
  const file = opts.file;
  idCounter.deterministic = opts.deterministic;
  idCounter.n = 0;
  const customTarget = opts.target !== undefined || opts.modelJson !== undefined || Object.keys(opts.compat).length > 0;
  const { chat: chatModel, responses: responsesModel } = buildModels(opts);
  const chatCompat = getChatCompat(chatModel);
  const responsesCompat = getResponsesCompat(responsesModel);
  // Same set openai-responses.js passes (OPENAI_TOOL_CALL_PROVIDERS).
  const responsesToolCallProviders = new Set(["openai", "openai-codex", "opencode"]);
  // What openai-responses.js buildParams passes, minus request-time options (no reasoning effort,
  // so configurationUpdateEffort is undefined) and grammarToolInputProperties (added per context).
  const responsesOptions = {
    supportsMidConvoSystemMessages: responsesCompat.supportsMidConvoSystemMessages,
    supportsAdditionalTools: responsesCompat.supportsAdditionalTools,
    supportsToolSearch: responsesCompat.supportsToolSearch,
    toolOptions: {
      supportsStrictMode: responsesCompat.supportsStrictMode,
      supportsOpenAIGrammarTools: responsesCompat.supportsOpenAIGrammarTools,
    },
  };


  const dir = mkdtempSync(join(tmpdir(), "pi-oracle-"));
  const copy = join(dir, "session.jsonl");
  const out = { file };
  let listing;
  let leafError;
  const t0 = performance.now();
  try {
    copyFileSync(file, copy);
    let sm;
    try {
      sm = SessionManager.open(copy, dir);
    } catch (error) {
      out.loadError = String(error && error.message ? error.message : error).replaceAll(dir, "<tmp>");
    }
    if (opts.listLeaves) {
      const leaves = [];
      if (sm) {
        const entries = sm.getEntries();
        const parents = new Set(entries.map((e) => e.parentId).filter((p) => p !== null && p !== undefined));
        for (const e of entries) if (!parents.has(e.id) && !leaves.includes(e.id)) leaves.push(e.id);
      }
      listing = sm ? { leaves } : { leaves, loadError: out.loadError };
    } else if (opts.usage) {
      listing = sm ? { usage: usageOf(sm) } : { loadError: out.loadError };
    } else if (sm) {
      if (opts.leaf !== undefined) {
        try {
          sm.branch(opts.leaf);
        } catch (error) {
          leafError = `--leaf ${opts.leaf}: ${error.message}`;
        }
      }
    }
    if (sm && !listing && !leafError) {
      out.header = sm.getHeader();
      out.leafId = sm.getLeafId();
      out.entryCount = sm.getEntryCount();
      out.migratedFileRewritten = readFileSync(copy, "utf8") !== readFileSync(file, "utf8");
      const ctx = sm.buildSessionContext();
      out.context = { messages: ctx.messages, model: ctx.model, thinkingLevel: ctx.thinkingLevel };
      const llm = attempt(() => convertToLlm(ctx.messages));
      out.llm_messages = llm;
      if (Array.isArray(llm)) {
        const transcript = normalizeContext({ messages: llm });
        // Both stream functions compute grammarToolInputProperties from the declared tools
        // before converting; do the same (inside attempt: it throws on a bad grammar tool).
        out.openai_chat = attempt(() =>
          convertMessages(chatModel, transcript, chatCompat, {
            grammarToolInputProperties: createGrammarToolInputProperties(
              getDeclaredTools(transcript.messages),
              chatCompat.supportsOpenAIGrammarTools,
            ),
          }),
        );
        out.responses_input = attempt(() =>
          convertResponsesMessages(responsesModel, transcript, responsesToolCallProviders, {
            grammarToolInputProperties: createGrammarToolInputProperties(
              getDeclaredTools(transcript.messages),
              responsesCompat.supportsOpenAIGrammarTools,
            ),
            ...responsesOptions,
          }),
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (leafError) fail(leafError);
  if (listing) return listing;
  if (customTarget) {
    out.target = { chatModel, chatCompat, responsesModel, responsesOptions };
  }
  out.elapsedMs = Math.round(performance.now() - t0);
  return out;
}

// --batch: stdin holds a JSON array of argument lists (each like a command line without
// "--batch"); one JSON line per job on stdout, in order, {"oracleError": "..."} for a bad job.
// One process for many files saves Node's start-up and pi's imports (about 0.3 s each).
if (cliOpts.listAll) {
  process.stdout.write(JSON.stringify(await listAll(cliOpts.listAll)) + "\n");
} else if (cliOpts.batch) {
  const jobs = JSON.parse(readFileSync(0, "utf8"));
  for (const argv of jobs) {
    let line;
    try {
      const out = runOne(parseArgs(argv));
      line = JSON.stringify(out);
    } catch (error) {
      // A crash inside pi on one file must not cost the other jobs their results.
      line = JSON.stringify(
        error instanceof UsageError ? { oracleError: error.message } : { oracleCrash: String(error && error.stack) },
      );
    }
    process.stdout.write(line + "\n");
  }
} else {
  try {
    const out = runOne(cliOpts);
    process.stdout.write(JSON.stringify(out, null, cliOpts.pretty ? 2 : undefined) + "\n");
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`oracle.mjs: ${error.message}\n${USAGE}`);
    process.exit(2);
  }
}
