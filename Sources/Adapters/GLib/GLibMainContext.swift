internal import CGLib

/// A GLib `GMainContext`, by reference: the context a loop is attached to.
///
/// RunLoopKit does not expose GLib's C types; a GLib or GTK binding hands its context over as
/// the raw pointer it holds (`init(_:)`). The reference does not retain the context: keep the
/// context alive, and attached loops detached, until you are done with it (see
/// <doc:EmbeddingInGLib>).
public struct GLibMainContext: Hashable, @unchecked Sendable {
    // @unchecked: a GMainContext is made for use from several threads (GLib locks it itself);
    // the struct only carries the address.

    /// The `GMainContext *`.
    public let pointer: OpaquePointer

    /// The context at `pointer`, a `GMainContext *` (for example from a GTK binding, or
    /// `g_main_context_new()`).
    public init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// GLib's global default context (`g_main_context_default()`): the one `g_main_loop_run`
    /// on a loop made with a `NULL` context, `g_application_run` and GTK iterate.
    public static var `default`: GLibMainContext {
        GLibMainContext(g_main_context_default())
    }
}
