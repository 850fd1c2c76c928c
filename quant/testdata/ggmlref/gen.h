/* Deterministic test inputs shared by the C harness (ggmlref.c) and the Go
 * tests (golden_test.go: the same generator transcribed). Integer arithmetic
 * plus exact float operations only, so both sides produce identical bits. */
#include <stdint.h>
#include <string.h>

static uint64_t sm_state;
static uint64_t next_u64(void) {            /* splitmix64 */
    uint64_t z = (sm_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static float from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
/* uniform in [-1, 1): a 24-bit signed integer times 2^-23 */
static float unif(void) { return (float)((int32_t)(next_u64() >> 40) - (1 << 23)) * from_bits(0x34000000u); }
/* 2^e for e in [-126, 127] */
static float fabsf_(float f) { uint32_t u; memcpy(&u, &f, 4); u &= 0x7fffffffu; return from_bits(u); }
static float pow2(int e) { return from_bits((uint32_t)(e + 127) << 23); }

/* fill x[0:n] with input set `set`, seeded by `seed`. */
static void gen(int set, uint64_t seed, float *x, int n) {
    sm_state = seed * 1000003u + (uint64_t)set;
    for (int i = 0; i < n; i++) {
        switch (set) {
        case 0: x[i] = unif(); break;
        case 1: { float a = unif(), b = unif(), c = unif(), d = unif(); x[i] = ((a + b) + (c + d)) * 0.5f; } break;
        case 2: { float u = unif(); int e = (int)(next_u64() % 48) - 24; x[i] = u * pow2(e); } break;
        case 3: x[i] = (float)((int)(next_u64() % 33) - 16) * 0.25f; break;
        default: break;
        }
    }
    if (set == 5) {
        /* per 32-element group: amax = 127*2^e and the rest (k+0.5)*2^e, so
         * x*127/amax lands exactly on .5 ties (half-even vs half-away) */
        for (int g = 0; g < n / 32; g++) {
            float *y = x + 32 * g;
            int e = (int)(next_u64() % 8) - 4;
            float s = pow2(e);
            for (int j = 0; j < 32; j++) {
                int k = (int)(next_u64() % 252) - 126;
                y[j] = ((float)k + 0.5f) * s;
            }
            int at = (int)(next_u64() % 32);
            y[at] = (next_u64() & 1) ? 127.0f * s : -127.0f * s;
        }
    }
    if (set == 6) {
        /* per 32-element group: random amax m, the rest (k+0.5)*(m/127):
         * x*id falls within an ulp or two of a .5 tie, so 127/m and
         * 1/(m/127) round differently now and then */
        for (int g = 0; g < n / 32; g++) {
            float *y = x + 32 * g;
            float u = unif();                          /* sequenced: C leaves */
            int e = (int)(next_u64() % 16) - 8;        /* operand order open  */
            float m = (fabsf_(u) + 0.5f) * pow2(e);
            float d = m / 127.0f;
            for (int j = 0; j < 32; j++) {
                int k = (int)(next_u64() % 252) - 126;
                y[j] = ((float)k + 0.5f) * d;
            }
            int at = (int)(next_u64() % 32);
            y[at] = (next_u64() & 1) ? m : -m;
        }
    }
    if (set == 4) {
        /* per 32-element group, one of eight shapes */
        for (int g = 0; g < n / 32; g++) {
            float *y = x + 32 * g;
            int mode = (int)(next_u64() % 8);
            float c = unif();
            for (int j = 0; j < 32; j++) {
                float u = unif();
                switch (mode) {
                case 0: y[j] = 0.0f; break;                         /* all zero */
                case 1: y[j] = c; break;                            /* constant */
                case 2: y[j] = (j == 7) ? 100.0f * c : u * 0.01f; break; /* outlier */
                case 3: y[j] = u * pow2(-120); break;               /* subnormal-ish */
                case 4: y[j] = u * 16384.0f; break;                 /* large */
                case 5: y[j] = -fabsf_(u); break;                   /* all negative */
                case 6: y[j] = fabsf_(u) + 1.0f; break;             /* all positive, offset */
                default: y[j] = (j % 2) ? c : -c; break;            /* +/- ties on amax */
                }
            }
        }
    }
}
