import Glibc

enum Limits {
    /// Raises the soft __rlimit_resource_t(RLIMIT_NOFILE.rawValue) to the hard limit; returns the soft limit now in force.
    ///
    /// The descriptor-scale scenario opens one eventfd per source (10,000 by default) on top of
    /// each backend's own; many distributions start processes with a soft limit of 1,024.
    @discardableResult
    static func raiseOpenFiles() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt64(limit.rlim_cur)
    }
}
