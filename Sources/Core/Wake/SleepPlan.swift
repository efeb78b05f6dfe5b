/// When and how a wait ends, decided under the loop's lock.
struct SleepPlan {
    /// When the wait ends by itself, in nanoseconds on ``QueueTime``'s scale: `nil` sleeps
    /// until an event. When `sleeps` is false it is the deadline already due, if that is why
    /// the wait polls.
    var deadline: Int64?
    var sleeps: Bool
    /// The timer slack the wait needs (`nil`: the thread's own).
    var slack: UInt?
    /// The tolerance of the timer that sets ``deadline``, in nanoseconds: how much earlier a
    /// host may end its wait and still serve that timer.
    var tolerance: Int64 = 0

    /// Computed, not stored: a stored static is a lazily made global whose first use, inside
    /// a pass, allocates its storage.
    static var poll: SleepPlan { SleepPlan(deadline: nil, sleeps: false, slack: nil) }
}
