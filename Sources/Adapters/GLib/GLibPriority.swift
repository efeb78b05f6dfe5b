/// A GLib source priority: among the sources ready in one iteration of a `GMainContext`, those
/// with the lowest value are dispatched; the others wait for a later iteration.
public struct GLibPriority: RawRepresentable, Hashable, Comparable, Sendable {
    /// GLib's value (`G_PRIORITY_DEFAULT` is 0).
    public let rawValue: Int32

    /// The priority with GLib's value `rawValue`.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// `G_PRIORITY_HIGH` (-100).
    public static let high = GLibPriority(rawValue: -100)
    /// `G_PRIORITY_DEFAULT` (0): the priority of `g_timeout_add` and of a GTK display's events.
    public static let `default` = GLibPriority(rawValue: 0)
    /// `G_PRIORITY_HIGH_IDLE` (100): GTK resizes at 110 and redraws at 120.
    public static let highIdle = GLibPriority(rawValue: 100)
    /// `G_PRIORITY_DEFAULT_IDLE` (200): the priority of `g_idle_add`.
    public static let defaultIdle = GLibPriority(rawValue: 200)
    /// `G_PRIORITY_LOW` (300).
    public static let low = GLibPriority(rawValue: 300)

    /// Whether `lhs` is dispatched before `rhs` (its value is lower).
    public static func < (lhs: GLibPriority, rhs: GLibPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
