import Glibc

/// Whether this program runs under the Thread Sanitizer (whose runtime is then linked in).
/// `dlsym` with a null handle searches the whole program (glibc's `RTLD_DEFAULT`).
let isThreadSanitized: Bool = dlsym(nil, "__tsan_init") != nil
