#include "outputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hsdr.h"

void hsdr_outputs_free(hsdr_outputs *o)
{
    free(o->y_f64);
    free(o->y_f32);
    free(o->A);
    free(o->C);
    free(o->q_group);
    free(o->q_row);
    free(o->lambda);
    free(o->sign);
    memset(o, 0, sizeof *o);
}

int hsdr_outputs_alloc(hsdr_outputs *o, const hsdr_variant *v, int N, int G, hsdr_matvec_io *io)
{
    memset(o, 0, sizeof *o);
    size_t n = (size_t)N, ng = (size_t)N * G;
    o->y_f64 = malloc(sizeof(double) * n);
    o->y_f32 = malloc(sizeof(float) * n);
    o->A = malloc(sizeof(int32_t) * ng * 8);
    o->C = malloc(sizeof(int16_t) * ng * HSDR_NSTATES);
    o->q_group = malloc(sizeof(int64_t) * ng);
    o->q_row = malloc(sizeof(int64_t) * n);
    o->lambda = malloc(sizeof(int32_t) * ng);
    o->sign = malloc(ng);
    if (!o->y_f64 || !o->y_f32 || !o->A || !o->C || !o->q_group || !o->q_row || !o->lambda || !o->sign)
        return -1;
    for (size_t i = 0; i < n; i++) {
        o->y_f64[i] = NAN;
        o->y_f32[i] = NAN;
        o->q_row[i] = INT64_MIN;
    }
    for (size_t i = 0; i < ng * 8; i++)
        o->A[i] = INT32_MIN;
    for (size_t i = 0; i < ng * HSDR_NSTATES; i++)
        o->C[i] = INT16_MIN;
    for (size_t i = 0; i < ng; i++) {
        o->q_group[i] = INT64_MIN;
        o->lambda[i] = INT32_MIN;
        o->sign[i] = 99;
    }
    unsigned out = v->outputs;
    io->y_f64 = v->precision == 64 ? o->y_f64 : NULL;
    io->y_f32 = v->precision == 32 ? o->y_f32 : NULL;
    io->A = (out & HSDR_OUT_A) ? o->A : NULL;
    io->C = (out & HSDR_OUT_C) ? o->C : NULL;
    io->q_group = (out & HSDR_OUT_Q1516) ? o->q_group : NULL;
    io->q_row = (out & HSDR_OUT_Q1516) ? o->q_row : NULL;
    io->flns_lambda = (out & HSDR_OUT_FLNS) ? o->lambda : NULL;
    io->flns_sign = (out & HSDR_OUT_FLNS) ? o->sign : NULL;
    return 0;
}

double hsdr_outputs_y(const hsdr_outputs *o, const hsdr_variant *v, int r)
{
    return v->precision == 64 ? o->y_f64[r] : (double)o->y_f32[r];
}
