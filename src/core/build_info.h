/* Declarations of the build facts generated at build time by cmake/build_info.cmake
 * (build/generated/build_info.c). Internal to the library. */
#ifndef RUNLAB_SRC_BUILD_INFO_H
#define RUNLAB_SRC_BUILD_INFO_H

extern const char rl_build_version[];
extern const char rl_build_git_sha[];
extern const int rl_build_git_dirty;
extern const char rl_build_type[];
extern const char rl_build_compiler[];

#endif
