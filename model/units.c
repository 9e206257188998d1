/*
 * Units for people and for other tools: sizes in bytes, the collective's algorithm and bus
 * bandwidth as nccl-tests defines them (its performance notes, "Performance reported by NCCL tests"), and a
 * configuration's CTA split in words. Nothing here changes what the model predicts; it only names the numbers.
 */
#include <stdio.h>
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

double duet_coll_bytes(const duet_workload_t *wl)
{
    if (wl == NULL || wl->coll <= DUET_COLL_NONE || wl->coll >= DUET_COLL_COUNT)
        return 0.0;
    /* The per-rank source tensor src[mc, nc], bytes. */
    double src = (double)wl->mc * (double)wl->nc * duet_dtype_bytes(wl->dtype);
    /* nccl-tests' S: the whole array. all_gather's is the gathered output, W sources (sendcount x
     * W); reduce_scatter's is the input (recvcount x W), which is duet's source; all_reduce,
     * all_to_all and broadcast move one source-sized buffer per rank. */
    return wl->coll == DUET_COLL_ALL_GATHER ? src * wl->world : src;
}

double duet_coll_busbw_factor(int32_t coll, int32_t world)
{
    double n = world;
    switch (coll) {
    case DUET_COLL_ALL_REDUCE:
        return 2.0 * (n - 1.0) / n;
    case DUET_COLL_ALL_GATHER:
    case DUET_COLL_REDUCE_SCATTER:
    case DUET_COLL_ALL_TO_ALL:
        return (n - 1.0) / n;
    case DUET_COLL_BROADCAST:
        return 1.0;
    default:
        return 0.0;
    }
}

void duet_coll_bandwidth(const duet_workload_t *wl, double time_s, double *algbw_gbs_p, double *busbw_gbs_p)
{
    double alg = time_s > 0.0 ? duet_coll_bytes(wl) / time_s / 1e9 : 0.0; /* GB/s, 1e9 bytes as nccl-tests */
    if (algbw_gbs_p != NULL)
        *algbw_gbs_p = alg;
    if (busbw_gbs_p != NULL)
        *busbw_gbs_p = wl != NULL ? alg * duet_coll_busbw_factor(wl->coll, wl->world) : 0.0;
}

duet_status_t duet_bytes_parse(const char *s, int64_t *bytes_p)
{
    if (s == NULL || *s < '0' || *s > '9')
        return duet__error(DUET_ERR_INVALID_ARG, "'%s' is not a size (digits, then K, M or G)", duet__q(s ? s : ""));
    int64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (INT64_MAX - 9) / 10)
            return duet__error(DUET_ERR_INVALID_ARG, "'%s' is too large", duet__q(s));
        v = v * 10 + (*p - '0');
    }
    /* Binary multiples, as nccl-tests reads its -b and -e (64M = 64 x 2^20 bytes). */
    int shift = 0;
    if (*p == 'K' || *p == 'k')
        shift = 10;
    else if (*p == 'M' || *p == 'm')
        shift = 20;
    else if (*p == 'G' || *p == 'g')
        shift = 30;
    if (shift > 0) {
        p++;
        if (strcmp(p, "iB") == 0 || strcmp(p, "B") == 0)
            p += strlen(p);
    } else if (strcmp(p, "B") == 0)
        p++;
    if (*p != '\0')
        return duet__error(DUET_ERR_INVALID_ARG, "'%s' is not a size (digits, then K, M or G: 1024-based)", duet__q(s));
    if (v > (INT64_MAX >> shift))
        return duet__error(DUET_ERR_INVALID_ARG, "'%s' is too large", duet__q(s));
    *bytes_p = v << shift;
    return DUET_OK;
}

duet_status_t duet_workload_set_comm_bytes(duet_workload_t *wl, int64_t bytes)
{
    int64_t eb = duet_dtype_bytes(wl->dtype);
    /* The source's share of S (duet_coll_bytes): all_gather's S is W sources. */
    int64_t per = wl->coll == DUET_COLL_ALL_GATHER ? (int64_t)wl->world : 1;
    if (wl->coll <= DUET_COLL_NONE || wl->coll >= DUET_COLL_COUNT)
        return duet__error(DUET_ERR_INVALID_ARG, "a size in bytes needs a collective");
    if (bytes <= 0 || bytes % (eb * per) != 0)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "%lld bytes of %s over %d ranks is not a whole number of %s elements per rank%s",
                           (long long)bytes, duet_collective_name(wl->coll), (int)wl->world, duet_dtype_name(wl->dtype),
                           per > 1 ? " (all_gather's size is the gathered output)" : "");
    int64_t elems = bytes / (eb * per);
    /* Rows of 8192 elements where they divide (a hidden size of a large model), else the widest
     * power of two that does; rows must split evenly over the ranks where the collective does. */
    int64_t rows_mult = (wl->coll == DUET_COLL_REDUCE_SCATTER || wl->coll == DUET_COLL_ALL_TO_ALL) ? wl->world : 1;
    for (int64_t nc = 8192; nc >= 1; nc /= 2)
        if (elems % nc == 0 && (elems / nc) % rows_mult == 0) {
            wl->mc = elems / nc;
            wl->nc = nc;
            return DUET_OK;
        }
    return duet__error(DUET_ERR_INVALID_ARG, "%lld bytes of %s cannot be split into %lld equal row blocks",
                       (long long)bytes, duet_collective_name(wl->coll), (long long)rows_mult);
}

const char *duet_config_split_str(const duet_config_t *cfg, char *buf, size_t n)
{
    switch (cfg->mode) {
    case DUET_MODE_FUSED:
        /* Every CTA ends on both queues: a comm home of 0 still runs comm tiles, by stealing. */
        snprintf(buf, n, "%d+%d steal", (int)cfg->gemm_wgs, (int)(cfg->num_wgs - cfg->gemm_wgs));
        break;
    case DUET_MODE_CONCURRENT:
        snprintf(buf, n, "%d|%d", (int)cfg->gemm_wgs, (int)cfg->comm_wgs);
        break;
    case DUET_MODE_COPY:
        /* The GEMM grid and the copy streams, which take no SM. */
        snprintf(buf, n, "%d|%d CE", (int)cfg->gemm_wgs, (int)cfg->comm_wgs);
        break;
    default:
        snprintf(buf, n, "%d SM|%d", (int)cfg->gemm_wgs, (int)cfg->comm_wgs);
        break;
    }
    return buf;
}
