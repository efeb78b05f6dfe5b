import Glibc
import RunLoopKit
import Testing

/// The one conversion of a timeout to the kernel's units (`Duration+Timeouts.swift`): rounded
/// up, never early; negative as zero; saturating instead of overflowing.
@Suite("Timeouts in the kernel's units")
struct DurationTimeoutTests {
    /// Longer than any type holds: past `Int64.max` seconds, where `Duration.components` traps.
    static let enormous = Duration.seconds(Int64.max) + .seconds(Int64.max)

    @Test("zero is zero in every unit")
    func zero() {
        #expect(Duration.zero.nanosecondsRoundedUp == 0)
        #expect(Duration.zero.millisecondsRoundedUp == 0)
        #expect(seconds(Duration.zero.timespecRoundedUp) == [0, 0])
        #expect(seconds(Duration.zero.timevalRoundedUp) == [0, 0])
    }

    @Test(
        "negative is zero in every unit",
        arguments: [Duration.zero - .nanoseconds(0.5), .zero - .seconds(5), .zero - enormous])
    func negative(_ duration: Duration) {
        #expect(duration.nanosecondsRoundedUp == 0)
        #expect(duration.millisecondsRoundedUp == 0)
        #expect(seconds(duration.timespecRoundedUp) == [0, 0])
        #expect(seconds(duration.timevalRoundedUp) == [0, 0])
    }

    @Test("a fraction of a unit rounds up to a whole one, never down")
    func roundsUp() {
        #expect(Duration.nanoseconds(0.5).nanosecondsRoundedUp == 1)
        #expect(Duration.nanoseconds(1).millisecondsRoundedUp == 1)
        #expect(Duration.nanoseconds(1_000_001).millisecondsRoundedUp == 2)
        #expect(seconds(Duration.nanoseconds(0.5).timespecRoundedUp) == [0, 1])
        #expect(seconds(Duration.nanoseconds(1).timevalRoundedUp) == [0, 1])
        #expect(seconds(Duration.nanoseconds(1_001).timevalRoundedUp) == [0, 2])
        #expect(seconds((Duration.seconds(1) + .nanoseconds(1)).timevalRoundedUp) == [1, 1])
        #expect(seconds((Duration.seconds(2) - .nanoseconds(1)).timevalRoundedUp) == [2, 0])
        #expect(seconds((Duration.seconds(2) - .nanoseconds(0.5)).timespecRoundedUp) == [2, 0])
    }

    @Test("a whole number of units is kept as it is")
    func exact() {
        let duration = Duration.seconds(3) + .milliseconds(250)
        #expect(duration.nanosecondsRoundedUp == 3_250_000_000)
        #expect(duration.millisecondsRoundedUp == 3_250)
        #expect(seconds(duration.timespecRoundedUp) == [3, 250_000_000])
        #expect(seconds(duration.timevalRoundedUp) == [3, 250_000])
    }

    @Test("too long for the type saturates", arguments: [Duration.seconds(Int64.max), enormous])
    func saturates(_ duration: Duration) {
        #expect(duration.nanosecondsRoundedUp == Int64.max)
        #expect(duration.millisecondsRoundedUp == Int32.max)
        #expect(seconds(duration.timespecRoundedUp) == [Int64.max / 1_000_000_000, Int64.max % 1_000_000_000])
        // Capped at Int32.max seconds, so that libevent's `now + timeout` cannot overflow.
        #expect(seconds(duration.timevalRoundedUp) == [Int64(Int32.max), 0])
    }

    @Test("at the edges of each cap")
    func edges() {
        #expect(Duration.nanoseconds(Int64.max - 1).nanosecondsRoundedUp == Int64.max - 1)
        #expect(Duration.milliseconds(Int64(Int32.max)).millisecondsRoundedUp == Int32.max)
        #expect(Duration.milliseconds(Int64(Int32.max) + 1).millisecondsRoundedUp == Int32.max)
        #expect(seconds(Duration.seconds(Int64(Int32.max) - 1).timevalRoundedUp) == [Int64(Int32.max) - 1, 0])
        #expect(
            seconds((Duration.seconds(Int64(Int32.max)) + .nanoseconds(1)).timevalRoundedUp) == [Int64(Int32.max), 0])
    }

    private func seconds(_ spec: timespec) -> [Int64] { [Int64(spec.tv_sec), Int64(spec.tv_nsec)] }
    private func seconds(_ value: timeval) -> [Int64] { [Int64(value.tv_sec), Int64(value.tv_usec)] }
}
