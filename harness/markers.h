/* likwid marker regions named exactly like the canonical stages (hsdr_stage_name), around every stage-alone
 * measurement, plus "matvec" around full runs. Compiled in with HSDR_LIKWID (CMake option); active only when the
 * process runs under `likwid-perfctr -m` (which sets LIKWID_MODE). Without counters (VMs) or without likwid the
 * calls are no-ops and the harness runs unchanged. */
#ifndef HSDR_MARKERS_H
#define HSDR_MARKERS_H

void hsdr_markers_init(void);       /* once, on the main thread, before the pools start */
void hsdr_markers_start(const char *region);
void hsdr_markers_stop(const char *region);
void hsdr_markers_close(void);
int hsdr_markers_active(void);

#endif
