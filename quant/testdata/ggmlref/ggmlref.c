/* ggmlref: runs llama.cpp's own quantizers and dequantizers (the shared
 * libraries that node-llama-cpp ships, as installed for the oracle) on the
 * inputs of gen.h and writes each output to OUTDIR/<name>.bin. mkgolden.sh
 * turns those into ../ggml_golden.txt (sha256 per output), which
 * golden_test.go checks the Go code against. Not part of the build.
 *
 *   gcc -O2 -o /tmp/ggmlref ggmlref.c -L$LIB -lggml-base -lggml-cpu-haswell -Wl,-rpath,$LIB
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "gen.h"

typedef void (*qfn)(const float *, void *, int64_t);
typedef void (*dqfn)(const void *, float *, int64_t);

/* ggml-base (reference quantizers, dequantizers, conversions) */
#define DECL(t) void quantize_row_##t##_ref(const float *, void *, int64_t); \
                void dequantize_row_##t(const void *, float *, int64_t);
DECL(q4_0) DECL(q4_1) DECL(q5_0) DECL(q5_1) DECL(q8_0)
DECL(q2_K) DECL(q3_K) DECL(q4_K) DECL(q5_K) DECL(q6_K) DECL(q8_K)
void quantize_row_q8_1_ref(const float *, void *, int64_t);
void ggml_fp32_to_fp16_row(const float *, uint16_t *, int64_t);
void ggml_fp16_to_fp32_row(const uint16_t *, float *, int64_t);
void ggml_fp32_to_bf16_row_ref(const float *, uint16_t *, int64_t);
void ggml_bf16_to_fp32_row(const uint16_t *, float *, int64_t);
/* ggml-cpu (haswell: AVX2 FMA F16C) activation quantizers */
void quantize_row_q8_0(const float *, void *, int64_t);
void quantize_row_q8_1(const float *, void *, int64_t);
void quantize_row_q8_K(const float *, void *, int64_t);

static const char *outdir;

static void put(const char *name, int set, const void *p, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s_%d.bin", outdir, name, set);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) { perror(path); exit(1); }
    fclose(f);
}

struct fmt { const char *name; int qk, bb; qfn q; dqfn dq; int half[2]; int nhalf; };

#define N 4096
#define NSETS 7

static void f16q(const float *x, void *y, int64_t n) { ggml_fp32_to_fp16_row(x, y, n); }
static void f16dq(const void *x, float *y, int64_t n) { ggml_fp16_to_fp32_row(x, y, n); }
static void bf16q(const float *x, void *y, int64_t n) { ggml_fp32_to_bf16_row_ref(x, y, n); }
static void bf16dq(const void *x, float *y, int64_t n) { ggml_bf16_to_fp32_row(x, y, n); }

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: ggmlref OUTDIR\n"); return 2; }
    outdir = argv[1];
    struct fmt fmts[] = {
        {"f16", 1, 2, f16q, f16dq, {0}, 0},
        {"bf16", 1, 2, bf16q, bf16dq, {0}, 0},
        {"q4_0", 32, 18, quantize_row_q4_0_ref, dequantize_row_q4_0, {0}, 1},
        {"q4_1", 32, 20, quantize_row_q4_1_ref, dequantize_row_q4_1, {0, 2}, 2},
        {"q5_0", 32, 22, quantize_row_q5_0_ref, dequantize_row_q5_0, {0}, 1},
        {"q5_1", 32, 24, quantize_row_q5_1_ref, dequantize_row_q5_1, {0, 2}, 2},
        {"q8_0", 32, 34, quantize_row_q8_0_ref, dequantize_row_q8_0, {0}, 1},
        {"q8_1", 32, 36, quantize_row_q8_1_ref, NULL, {0, 2}, 2},
        {"q2_K", 256, 84, quantize_row_q2_K_ref, dequantize_row_q2_K, {80, 82}, 2},
        {"q3_K", 256, 110, quantize_row_q3_K_ref, dequantize_row_q3_K, {108}, 1},
        {"q4_K", 256, 144, quantize_row_q4_K_ref, dequantize_row_q4_K, {0, 2}, 2},
        {"q5_K", 256, 176, quantize_row_q5_K_ref, dequantize_row_q5_K, {0, 2}, 2},
        {"q6_K", 256, 210, quantize_row_q6_K_ref, dequantize_row_q6_K, {208}, 1},
        {"q8_K", 256, 292, quantize_row_q8_K_ref, dequantize_row_q8_K, {0}, -1},
        {"act_q8_0", 32, 34, quantize_row_q8_0, NULL, {0}, 0},
        {"act_q8_1", 32, 36, quantize_row_q8_1, NULL, {0}, 0},
        {"act_q8_K", 256, 292, quantize_row_q8_K, NULL, {0}, 0},
    };
    static float x[N], y[N];
    static uint8_t q[N * 4];
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        struct fmt *f = &fmts[k];
        size_t nbytes = (size_t)N / f->qk * f->bb;
        for (int set = 0; set < NSETS; set++) {
            gen(set, 1, x, N);
            memset(q, 0, sizeof q);
            f->q(x, q, N);
            put(f->name, set, q, nbytes);
            if (f->dq) {
                f->dq(q, y, N);
                char name[64];
                snprintf(name, sizeof name, "dq_%s", f->name);
                put(name, set, y, sizeof y);
            }
        }
        /* dequantize random bytes with finite scales: set 9 */
        if (f->dq && strncmp(f->name, "act", 3) != 0) {
            sm_state = 777 + k;
            for (size_t i = 0; i < nbytes; i++) q[i] = (uint8_t)next_u64();
            for (size_t b = 0; b < nbytes / f->bb; b++) {
                uint8_t *blk = q + b * f->bb;
                if (f->qk == 1) { /* every element is a half / bf16 */
                    uint16_t h; memcpy(&h, blk, 2);
                    if (!strcmp(f->name, "f16") && (h & 0x7c00) == 0x7c00) h &= ~0x4000;
                    if (!strcmp(f->name, "bf16") && (h & 0x7f80) == 0x7f80) h &= ~0x4000;
                    memcpy(blk, &h, 2);
                } else if (f->nhalf < 0) { /* q8_K: float32 d */
                    uint32_t u; memcpy(&u, blk, 4);
                    if ((u & 0x7f800000u) == 0x7f800000u) u &= ~0x40000000u;
                    memcpy(blk, &u, 4);
                } else {
                    for (int h = 0; h < f->nhalf; h++) {
                        uint16_t v; memcpy(&v, blk + f->half[h], 2);
                        if ((v & 0x7c00) == 0x7c00) v &= ~0x4000;
                        memcpy(blk + f->half[h], &v, 2);
                    }
                }
            }
            put(f->name, 9, q, nbytes);
            f->dq(q, y, N);
            char name[64];
            snprintf(name, sizeof name, "dq_%s", f->name);
            put(name, 9, y, sizeof y);
        }
    }
    return 0;
}
