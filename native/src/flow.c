/*
 * flow.c - setting up the flows of a session (see flow.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "flow.h"
#include "internal.h"

int flows_create(struct iog_session *s)
{
    s->flows = calloc(s->njobs, sizeof(*s->flows));
    if (!s->flows)
        return -ENOMEM;
    for (uint32_t j = 0; j < s->njobs; j++) {
        struct iog_job *job = &s->jobs[j];
        if (!job->spec.flow_weight)
            continue;
        struct iog_flow *f = NULL;
        for (uint32_t i = 0; i < s->nflows && !f; i++)
            if (s->flows[i].id == job->spec.flow_id)
                f = &s->flows[i];
        if (!f) {
            f = &s->flows[s->nflows++];
            f->id = job->spec.flow_id;
            f->count = 1;
        }
        job->flow = f; /* each thread brings its weight as it starts (flow_join) */
    }
    return 0;
}
