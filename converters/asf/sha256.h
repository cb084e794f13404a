/* SHA-256 (FIPS 180-4) for the ASF ids, included by _jcs.c.
 *
 * Every ASF entry costs two hashes (its body, then its envelope). hashlib's call goes
 * through OpenSSL 3's EVP layer, whose per-call set-up (~1 us) outweighs hashing a
 * 200-byte envelope; here a hash is a plain function call. Where the CPU has the SHA
 * extensions (x86 SHA-NI, checked once at run time) the blocks use them; elsewhere the
 * portable rounds below. tests/test_asf_jcs_speedups.py holds both to hashlib.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t sha256_initial[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

typedef void (*sha256_blocks_fn)(uint32_t state[8], const uint8_t *data, size_t blocks);

#define SHA256_ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static uint32_t
sha256_load_be(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static void
sha256_blocks_portable(uint32_t state[8], const uint8_t *data, size_t blocks)
{
    uint32_t w[64];
    for (; blocks > 0; blocks--, data += 64) {
        for (int t = 0; t < 16; t++)
            w[t] = sha256_load_be(data + 4 * t);
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = SHA256_ROTR(w[t - 15], 7) ^ SHA256_ROTR(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = SHA256_ROTR(w[t - 2], 17) ^ SHA256_ROTR(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; t++) {
            uint32_t s1 = SHA256_ROTR(e, 6) ^ SHA256_ROTR(e, 11) ^ SHA256_ROTR(e, 25);
            uint32_t ch = (e & f) ^ (~e & g);
            uint32_t t1 = h + s1 + ch + sha256_k[t] + w[t];
            uint32_t s0 = SHA256_ROTR(a, 2) ^ SHA256_ROTR(a, 13) ^ SHA256_ROTR(a, 22);
            uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
            uint32_t t2 = s0 + maj;
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
        state[4] += e;
        state[5] += f;
        state[6] += g;
        state[7] += h;
    }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SHA256_HAVE_SHANI 1
#include <cpuid.h>
#include <immintrin.h>

/* The SHA-NI instructions keep the working variables as two vectors, ABEF and CDGH;
 * each sha256rnds2 does two rounds, each sha256msg1/msg2 pair four words of the
 * message schedule. */
__attribute__((target("sha,sse4.1"))) static void
sha256_blocks_shani(uint32_t state[8], const uint8_t *data, size_t blocks)
{
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
    for (; blocks > 0; blocks--, data += 64) {
        const __m128i abef_before = abef, cdgh_before = cdgh;
        __m128i msg[4];
        for (int i = 0; i < 16; i++) {
            __m128i words;
            if (i < 4) {
                words = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), byte_swap);
            }
            else {
                /* W[t] = W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]), four at a time */
                words = _mm_sha256msg1_epu32(msg[i & 3], msg[(i + 1) & 3]);
                words = _mm_add_epi32(words, _mm_alignr_epi8(msg[(i + 3) & 3], msg[(i + 2) & 3], 4));
                words = _mm_sha256msg2_epu32(words, msg[(i + 3) & 3]);
            }
            msg[i & 3] = words;
            __m128i wk = _mm_add_epi32(words, _mm_loadu_si128((const __m128i *)&sha256_k[4 * i]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

static int
sha256_cpu_has_shani(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || !(c & (1u << 9)))
        return 0; /* SSE4.1, SSSE3 */
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & (1u << 29)) != 0; /* SHA */
}
#endif

static sha256_blocks_fn sha256_blocks = sha256_blocks_portable;

/* Choose the block function once, at import; ``portable`` forces the plain rounds. */
static void
sha256_init(int portable)
{
    sha256_blocks = sha256_blocks_portable;
#ifdef SHA256_HAVE_SHANI
    if (!portable && sha256_cpu_has_shani())
        sha256_blocks = sha256_blocks_shani;
#endif
}

static void
sha256(const uint8_t *data, size_t len, uint8_t digest[32])
{
    uint32_t state[8];
    memcpy(state, sha256_initial, sizeof state);
    size_t whole = len / 64;
    if (whole)
        sha256_blocks(state, data, whole);
    uint8_t tail[128] = {0};
    size_t rest = len - whole * 64;
    memcpy(tail, data + whole * 64, rest);
    tail[rest] = 0x80;
    size_t tail_len = rest < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
    sha256_blocks(state, tail, tail_len / 64);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)state[i];
    }
}

/* "sha256:" and 64 lowercase hex digits, into out[71]. */
static void
sha256_id(const uint8_t *data, size_t len, char out[71])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t digest[32];
    sha256(data, len, digest);
    memcpy(out, "sha256:", 7);
    for (int i = 0; i < 32; i++) {
        out[7 + 2 * i] = hex[digest[i] >> 4];
        out[8 + 2 * i] = hex[digest[i] & 15];
    }
}
