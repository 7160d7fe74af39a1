#ifndef MAGIC_H
#define MAGIC_H
#define MAGIC 1000003LL
#endif
