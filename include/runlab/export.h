/* runlab/export.h: RL_API, the mark on every declaration of the public API. librunlab is
 * built with hidden visibility (CMakeLists.txt), so only what carries RL_API is exported
 * from librunlab.so; internal functions stay out of the ABI. */
#ifndef RUNLAB_EXPORT_H
#define RUNLAB_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define RL_API __attribute__((visibility("default")))
#else
#define RL_API
#endif

#endif
