/// When and how a wait ends, decided under the loop's lock.
struct SleepPlan {
    /// When the wait ends by itself: `nil` sleeps until an event; `sleeps` false polls.
    var deadline: ContinuousClock.Instant?
    var sleeps: Bool
    /// The timer slack the wait needs (`nil`: the thread's own).
    var slack: UInt?

    /// Computed, not stored: a stored static is a lazily made global whose first use, inside
    /// a pass, allocates its storage.
    static var poll: SleepPlan { SleepPlan(deadline: nil, sleeps: false, slack: nil) }
}
