/*
 * support.h
 *	  The planner support of the operators (support.c): the radius an operand
 *	  stands for, as far as the planner knows.
 */
#ifndef SIMHASH_SUPPORT_H
#define SIMHASH_SUPPORT_H

#include "postgres.h"

struct PlannerInfo;
struct Node;
extern int	simhash_estimated_distance(struct PlannerInfo *root, struct Node *node, Oid sibling);

#endif							/* SIMHASH_SUPPORT_H */
