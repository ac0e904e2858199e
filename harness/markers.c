#include "markers.h"

#include <stdlib.h>

#ifdef HSDR_WITH_LIKWID
#define LIKWID_PERFMON
#include <likwid-marker.h>
static int active;
void hsdr_markers_init(void)
{
    active = getenv("LIKWID_MODE") != NULL;
    if (active)
        LIKWID_MARKER_INIT;
}
void hsdr_markers_start(const char *region)
{
    static _Thread_local int thread_ready; /* pool threads register with likwid on first use */
    if (!active)
        return;
    if (!thread_ready) {
        LIKWID_MARKER_THREADINIT;
        thread_ready = 1;
    }
    LIKWID_MARKER_START(region);
}
void hsdr_markers_stop(const char *region)
{
    if (active)
        LIKWID_MARKER_STOP(region);
}
void hsdr_markers_close(void)
{
    if (active)
        LIKWID_MARKER_CLOSE;
}
int hsdr_markers_active(void)
{
    return active;
}
#else
void hsdr_markers_init(void) {}
void hsdr_markers_start(const char *region)
{
    (void)region;
}
void hsdr_markers_stop(const char *region)
{
    (void)region;
}
void hsdr_markers_close(void) {}
int hsdr_markers_active(void)
{
    return 0;
}
#endif
