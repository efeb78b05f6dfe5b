/// A weak reference to a loop, for items that must not keep their loop alive.
///
/// A loop's first weak reference gives it a side table, shared by every later one and freed with
/// the loop. The loop points to it only through its reference count, in an encoding
/// LeakSanitizer cannot read: a loop alive at exit (the main loop, the loop of a thread still
/// running) would have its side table reported as a leak once its last `WeakLoop` is gone, and
/// suppressing that report would hide everything reachable from a side table — every leaked
/// loop among it. So each loop holds one `WeakLoop` to itself (`Loop.selfReference`): a live
/// loop's side table is reachable, and a leaked loop is reported whole, its side table with it.
struct WeakLoop: Sendable {
    weak var loop: Loop?
}
