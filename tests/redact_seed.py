"""A pi session seeded with secrets of many kinds in every field a session has, for the
redaction tests. The values are made up, in each issuer's format."""

from __future__ import annotations

import json
from typing import Any

PEM_BODY = (
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n"
)
SECRETS: dict[str, str] = {
    "aws-access-token": "AKIAQYLPMN5HFIQR7XZQ",
    "github-pat": "ghp_8fK2mQ9xT4vB7nL1pR6sW3yZ0cH5jD2gA9eU",
    "github-fine-grained-pat": "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Ef8Gh0",
    "gitlab-pat": "glpat-x7Kq2Lm9Pz4Rt8Vw1Ny3",
    "slack-bot-token": "xoxb-2934857261-7364528190-k3J8mN2pQ5rT9vX1zB4cF7hL",
    "slack-webhook-url": "hooks.slack.com/services/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",
    "stripe-access-token": "sk_live_51Hx8Kq2Lm9Pz4Rt8Vw1Ny3Bc6Df",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "private-key": PEM_BODY.split("\n")[1],
    "anthropic-api-key": "sk-ant-api03-" + "x7Kq2Lm9Pz4Rt8Vw1Ny3Bc6Df0Gh5Jk" * 3 + "AA",
    "gcp-api-key": "AIzaSyD8fK2mQ9xT4vB7nL1pR6sW3yZ0cH5jD2g",
    "npm-access-token": "npm_k3J8mN2pQ5rT9vX1zB4cF7hL0wE6yU2iO4aS",
    "sendgrid-api-token": "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",
    "huggingface-access-token": "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",
    "url-password": "Sup3rS3cretPassw0rd",
    "env-assignment": "Zk4n8Qw2Rt6Yp1Ls9Dx3Cv7Bm5Nh0Jg",
    "generic-api-key": "f83kd92jfm30cnq84ls0",
    "curl-auth-header": "Zq8Wn3Kd7Lp2Mx9Vb4Rt6Yh1",
    "value": "Project Nightingale",
    "pattern": "ACME-4821",
    "user": "alicewonder",
}
"""Rule that must catch it -> the secret value that must not survive."""

HOME = "/home/alicewonder"

PAYLOAD = "\n".join(
    [
        f"export AWS_ACCESS_KEY_ID={SECRETS['aws-access-token']}",
        f"git remote set-url origin https://{SECRETS['github-pat']}@github.com/acme/app.git",
        f"GH_FINE={SECRETS['github-fine-grained-pat']}",
        f"gitlab token {SECRETS['gitlab-pat']}",
        f"SLACK_BOT_TOKEN={SECRETS['slack-bot-token']}",
        f"webhook: https://{SECRETS['slack-webhook-url']}",
        f"stripe.api_key = '{SECRETS['stripe-access-token']}'",
        f"Authorization: Bearer {SECRETS['jwt']}",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----",
        f"ANTHROPIC_API_KEY={SECRETS['anthropic-api-key']}",
        f"maps key {SECRETS['gcp-api-key']}",
        f"//registry.npmjs.org/:_authToken={SECRETS['npm-access-token']}",
        f"SENDGRID={SECRETS['sendgrid-api-token']}",
        f"HF={SECRETS['huggingface-access-token']}",
        f"DATABASE_URL=postgres://admin:{SECRETS['url-password']}@db.internal:5432/app",
        f"SESSION_SALT={SECRETS['env-assignment']}",
        f'config = {{"api_key": "{SECRETS["generic-api-key"]}"}}',
        f"curl -H 'Authorization: Bearer {SECRETS['curl-auth-header']}' https://api.acme.test",
        f"the code name is {SECRETS['value']}, ticket {SECRETS['pattern']}",
        f"ssh {SECRETS['user']}@build.acme.test; ls {HOME}/src",
    ]
)


def seeded_session() -> bytes:
    """Every field a pi session has, each holding :data:`PAYLOAD`."""
    p = PAYLOAD
    ts = "2026-11-30T06:42:55.000Z"
    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "0199a5e0-0000-7000-8000-000000000001",
            "timestamp": ts,
            "cwd": f"{HOME}/projects/app",
            "note": p,
        },
        {
            "type": "model_change",
            "id": "e0000001",
            "parentId": None,
            "timestamp": ts,
            "provider": "anthropic",
            "modelId": "claude-x",
        },
        {
            "type": "message",
            "id": "e0000002",
            "parentId": "e0000001",
            "timestamp": ts,
            "message": {"role": "system", "content": p, "sections": {"preamble": p}},
        },
        {
            "type": "message",
            "id": "e0000003",
            "parentId": "e0000002",
            "timestamp": ts,
            "message": {"role": "user", "content": [{"type": "text", "text": p}], "timestamp": 1796020975000},
        },
        {
            "type": "message",
            "id": "e0000004",
            "parentId": "e0000003",
            "timestamp": ts,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": p, "thinkingSignature": "c2lnbmF0dXJlLW9wYXF1ZQ=="},
                    {"type": "text", "text": p},
                    {
                        "type": "toolCall",
                        "id": "toolu_01",
                        "name": "bash",
                        "arguments": {"command": p, "env": {"nested": [{"deeper": p}], p: "as a key"}},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-x",
                "usage": {
                    "input": 1,
                    "output": 2,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 3,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "toolUse",
                "timestamp": 1796020975100,
            },
        },
        {
            "type": "message",
            "id": "e0000005",
            "parentId": "e0000004",
            "timestamp": ts,
            "message": {
                "role": "toolResult",
                "toolCallId": "toolu_01",
                "toolName": "bash",
                "content": [{"type": "text", "text": p}],
                "details": {"stdout": p},
                "isError": False,
                "timestamp": 1796020975200,
            },
        },
        {
            "type": "message",
            "id": "e0000006",
            "parentId": "e0000005",
            "timestamp": ts,
            "message": {
                "role": "bashExecution",
                "command": p,
                "output": p,
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "fullOutputPath": f"{HOME}/.pi/tmp/out.txt",
                "timestamp": 1796020975300,
            },
        },
        {
            "type": "message",
            "id": "e0000007",
            "parentId": "e0000006",
            "timestamp": ts,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "failed"}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-x",
                "stopReason": "error",
                "errorMessage": p,
                "timestamp": 1796020975400,
            },
        },
        {
            "type": "custom",
            "customType": "acme.state",
            "data": {"blob": p, "list": [p]},
            "id": "e0000008",
            "parentId": "e0000007",
            "timestamp": ts,
        },
        {
            "type": "custom_message",
            "customType": "acme.note",
            "content": p,
            "display": True,
            "details": {"d": p},
            "id": "e0000009",
            "parentId": "e0000008",
            "timestamp": ts,
        },
        {
            "type": "label",
            "id": "e000000a",
            "parentId": "e0000009",
            "timestamp": ts,
            "targetId": "e0000003",
            "label": p,
        },
        {"type": "session_info", "id": "e000000b", "parentId": "e000000a", "timestamp": ts, "name": p},
        {
            "type": "compaction",
            "id": "e000000c",
            "parentId": "e000000b",
            "timestamp": ts,
            "summary": p,
            "firstKeptEntryId": "e0000009",
            "tokensBefore": 1000,
            "details": {"readFiles": [f"{HOME}/secret.txt"]},
        },
        {
            "type": "message",
            "id": "e000000d",
            "parentId": "e000000c",
            "timestamp": ts,
            "message": {"role": "user", "content": p, "timestamp": 1796020975500},
        },
        {
            "type": "branch_summary",
            "id": "e000000e",
            "parentId": "e0000003",
            "timestamp": ts,
            "fromId": "e000000d",
            "summary": p,
        },
        {
            "type": "message",
            "id": "e000000f",
            "parentId": "e000000e",
            "timestamp": ts,
            "message": {"role": "user", "content": p, "timestamp": 1796020975600},
        },
    ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def forms(secret: str) -> list[bytes]:
    """The byte spellings a secret could survive in: plain, JSON-escaped, HTML-escaped."""
    import html

    out = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=True)[1:-1], html.escape(secret)}
    out.add(json.dumps(secret).replace("/", "\\/")[1:-1])
    return [s.encode() for s in out]
