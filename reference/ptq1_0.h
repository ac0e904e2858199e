/* PTQ1_0 ternary weight blocks (spec/ptq1_0.md section 1) and the PQ2_0 sibling (section 2).
 *
 * PTQ1_0: 28 bytes per 128 weights: qs[24] (5 base-3 digits per byte), qh[2] (4 digits per byte), fp16 d last.
 * Weight order inside a block is NOT sequential: digit n of qs[m], m < 16, is weight 16n + m; digit n of qs[16 + m]
 * is weight 80 + 8n + m; digit n of qh[h] is weight 120 + 2n + h. Digit t means the ternary value t - 1.
 * PQ2_0: 34 bytes per 128 weights: fp16 d first, then 2 bits per weight (low pair first), code c means c - 1. */
#ifndef HSDR_PTQ1_0_H
#define HSDR_PTQ1_0_H
#include <stddef.h>
#include <stdint.h>

#define HSDR_QK 128                /* weights per block (one ternary group) */
#define HSDR_PTQ1_0_BYTES 28
#define HSDR_PQ2_0_BYTES 34

/* One byte of base-3 digits: ndigits = 5 (qs) or 4 (qh; the fifth digit is 0). Digits in 0..2, t0 most significant. */
uint8_t hsdr_ptq1_0_encode_byte(const uint8_t *digits, int ndigits);
/* The three decode forms of spec section 1; each writes 5 digits (all in 0..2 for any byte value). */
void hsdr_ptq1_0_decode_byte_int(uint8_t byte, uint8_t digits[5]);
void hsdr_ptq1_0_decode_byte_cmp(uint8_t byte, uint8_t digits[5]);
void hsdr_ptq1_0_decode_byte_float(uint8_t byte, uint8_t digits[5]);

/* Where weight e (0..127) lives: byte index in the block (0..25) and digit position n. */
void hsdr_ptq1_0_locate(int e, int *byte_index, int *digit);

/* Pack 128 ternary values (natural order, each -1/0/+1) with fp16 scale bits into a block. */
void hsdr_ptq1_0_pack(const int8_t t[HSDR_QK], uint16_t d_bits, uint8_t block[HSDR_PTQ1_0_BYTES]);

enum hsdr_decode_form { HSDR_DECODE_INT = 0, HSDR_DECODE_CMP = 1, HSDR_DECODE_FLOAT = 2 };
/* Unpack a block into natural-order ternary values (-1/0/+1) using one of the three decode forms. */
void hsdr_ptq1_0_unpack(const uint8_t block[HSDR_PTQ1_0_BYTES], int8_t t[HSDR_QK], enum hsdr_decode_form form);
uint16_t hsdr_ptq1_0_d_bits(const uint8_t block[HSDR_PTQ1_0_BYTES]);

/* Reference quantizer: amax = max|w|; d = fp16(amax); id = amax != 0 ? 1/amax : 0 (fp32);
 * t = lroundf(w * id) + 1 (the fp32 product, rounded half away from zero). */
void hsdr_ptq1_0_quantize(const float w[HSDR_QK], uint8_t block[HSDR_PTQ1_0_BYTES]);

/* Planar masks of one block: bit i of nz is set when weight i != 0, of neg when weight i = -1 (natural order,
 * word 0 holds weights 0..63). */
void hsdr_ptq1_0_to_masks(const uint8_t block[HSDR_PTQ1_0_BYTES], uint64_t nz[2], uint64_t neg[2]);

/* PQ2_0: codes c in 0..3 (value c - 1). */
void hsdr_pq2_0_pack(const uint8_t codes[HSDR_QK], uint16_t d_bits, uint8_t block[HSDR_PQ2_0_BYTES]);
void hsdr_pq2_0_unpack(const uint8_t block[HSDR_PQ2_0_BYTES], uint8_t codes[HSDR_QK], uint16_t *d_bits);
/* d = fp16(amax), c = clamp(roundf(w / amax) + 1, 0, 3); an all-zero block gets code 1 everywhere. */
void hsdr_pq2_0_quantize(const float w[HSDR_QK], uint8_t block[HSDR_PQ2_0_BYTES]);
/* Ternary values of a PQ2_0 block; returns the index of the first code 3 (+2: not ternary) or -1 when all are. */
int hsdr_pq2_0_to_ternary(const uint8_t block[HSDR_PQ2_0_BYTES], int8_t t[HSDR_QK]);
/* PTQ1_0 -> PQ2_0 (lossless for ternary weights). */
void hsdr_ptq1_0_to_pq2_0(const uint8_t in[HSDR_PTQ1_0_BYTES], uint8_t out[HSDR_PQ2_0_BYTES]);

#endif
