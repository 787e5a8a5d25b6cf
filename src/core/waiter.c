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

void kb_waiter_enqueue(kb_link *queue, kb_waiter *w, const kb_waitable *on, const char *op)
{
    if (!w)
        return;
    kb_list_push_back(queue, &w->link);
    if (w->proc)
        kb_proc_set_wait(w->proc, on, op);
}

kb_waiter *kb_waiter_take_first(kb_link *queue)
{
    kb_waiter *w = KB_CONTAINER_OF(queue->next, kb_waiter, link);
    kb_waiter_cancel(w);
    return w;
}

void kb_waiter_cancel_all(kb_link *queue)
{
    while (!kb_list_empty(queue))
        kb_waiter_cancel(KB_CONTAINER_OF(queue->next, kb_waiter, link));
}
