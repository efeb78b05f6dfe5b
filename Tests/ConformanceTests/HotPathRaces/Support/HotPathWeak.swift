/// A weak reference another thread can read: set once before it is shared.
final class HotPathWeak<Object: AnyObject>: @unchecked Sendable {
    // @unchecked: `object` is written only by the initializer; Swift's weak references may be
    // read on one thread while the object is released on another.
    private(set) weak var object: Object?

    init(_ object: Object) { self.object = object }
}
