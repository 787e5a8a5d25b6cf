#include "core/waiter.h"

#include "core/proc.h"

void kb_waiter_cancel(kb_waiter *w)
{
    if (!kb_waiter_queued(w))
        return;
    kb_link_unlink(&w->link);
    if (w->proc)
        kb_proc_clear_wait(w->proc);
}
