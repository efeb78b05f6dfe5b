/// A C pointer handed to other threads that use it only through thread-safe C calls.
struct SendablePointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}
