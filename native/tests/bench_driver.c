/*
 * bench_driver.c - runs one time-based job and prints its IOPS and mean
 * latency, for comparisons with other benchmark tools. Not a test.
 *
 *   bench_driver ENGINE RW BS IODEPTH SECONDS [FILE [direct]]
 *   ENGINE: null | psync | io_uring; RW: read write randread randwrite
 */
#include "test_util.h"

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s ENGINE RW BS IODEPTH SECONDS [FILE [direct]]\n", argv[0]);
        return 2;
    }
    static const char *rws[] = {"read", "write", "randread", "randwrite", "rw", "randrw"};
    const char *engine = argv[1];
    uint32_t rw = 99;
    for (uint32_t i = 0; i < 6; i++)
        if (strcmp(argv[2], rws[i]) == 0)
            rw = i;
    struct iog_job_spec j = t_spec(engine, rw, strtoull(argv[3], NULL, 0), 1ull << 30);
    j.iodepth = (uint32_t)strtoul(argv[4], NULL, 0);
    j.flags = IOG_JOB_TIME_BASED;
    j.runtime_ns = (uint64_t)(atof(argv[5]) * 1e9);
    if (argc > 6)
        snprintf(j.filename, sizeof(j.filename), "%s", argv[6]);
    if (argc > 7 && strcmp(argv[7], "direct") == 0)
        j.flags |= IOG_JOB_DIRECT;
    iog_session *s = NULL;
    int rc = t_run(&j, 1, &s);
    if (rc < 0) {
        iog_session_destroy(s);
        return 1;
    }
    uint32_t dir = (rw == 1 || rw == 3) ? IOG_DIR_WRITE : IOG_DIR_READ;
    struct iog_dir_stats st;
    t_stats(s, 0, dir, &st);
    printf("ios=%llu runtime_ms=%.1f iops=%.0f lat_mean_ns=%.1f clat_mean_ns=%.1f errors=%llu\n",
           (unsigned long long)st.ios, st.runtime_ns / 1e6, st.iops, st.lat[IOG_LAT_LAT].mean_ns,
           st.lat[IOG_LAT_CLAT].mean_ns, (unsigned long long)st.errors);
    iog_session_destroy(s);
    return 0;
}
