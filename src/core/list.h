/* Intrusive circular doubly-linked list with a sentinel head.
 * Unlinking needs no reference to the list, so a waiter can be detached
 * from whatever queue it sits in. */
#ifndef KB_CORE_LIST_H
#define KB_CORE_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kb_link {
    struct kb_link *prev, *next;
} kb_link;

static inline void kb_list_init(kb_link *head) { head->prev = head->next = head; }

static inline bool kb_list_empty(const kb_link *head) { return head->next == head; }

/* A link that is in no list points at itself. */
static inline bool kb_link_linked(const kb_link *l) { return l->next != l && l->next != NULL; }

static inline void kb_list_push_back(kb_link *head, kb_link *l)
{
    l->prev = head->prev;
    l->next = head;
    head->prev->next = l;
    head->prev = l;
}

static inline void kb_link_unlink(kb_link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = l;
}

static inline kb_link *kb_list_pop_front(kb_link *head)
{
    kb_link *l = head->next;
    if (l == head)
        return NULL;
    kb_link_unlink(l);
    return l;
}

static inline size_t kb_list_count(const kb_link *head)
{
    size_t n = 0;
    for (const kb_link *l = head->next; l != head; l = l->next)
        n++;
    return n;
}

#endif
