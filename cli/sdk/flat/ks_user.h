/* <kscope/ks_user.h> - your trace: the descriptor (ks_user_trace_create, _destroy),
 * ks_user_add_tensor, ks_user_site, ks_user_launch_sim: a flat name for
 * <kscope/trace/ks_user.h>, installed beside <kscope/kscope.h> (the nested name keeps
 * working). No guard of its own: it forwards. */
#include "trace/ks_user.h"
