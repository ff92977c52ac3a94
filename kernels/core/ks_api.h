/* ks_api.h - what marks the SDK's API (public; installed as <kscope/kernels/core/ks_api.h>,
 * included by every installed header that declares a function).
 *
 * libkscope.so is built with hidden visibility: a function is exported only when its
 * declaration in an installed header carries KS_API (tests/test_exports.sh holds the
 * library's exports to exactly those declarations). KS_DEPRECATED marks a name kept for
 * one minor version (docs/your-own-kernel.md lists them and their replacements): a
 * compiler that knows the attribute warns where it is used; define KS_NO_DEPRECATED
 * before the first include to silence it. */
#ifndef KS_API_H
#define KS_API_H

#if defined(__GNUC__) || defined(__clang__)
#define KS_API __attribute__((visibility("default")))
#else
#define KS_API
#endif

#if defined(KS_NO_DEPRECATED) || !(defined(__GNUC__) || defined(__clang__))
#define KS_DEPRECATED(msg)
#else
#define KS_DEPRECATED(msg) __attribute__((deprecated(msg)))
#endif

#endif
