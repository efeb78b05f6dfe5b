/// A weak reference to a loop, for items that must not keep their loop alive.
struct WeakLoop: Sendable {
    weak var loop: Loop?
}
