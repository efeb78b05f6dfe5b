package import CGLib

/// A `GSource` whose functions are Swift's and which owns a Swift object, its state: GLib
/// allocates the source with room for one pointer after its own fields, where the object sits,
/// retained; the source's finalize releases it.
///
/// The GLib adapter's source (a loop attached to a context) and the GLib backend's
/// nested-iteration source are both made so; each has its own functions and state type.
package enum ObjectGSource {
    package typealias Prepare = @convention(c) (UnsafeMutablePointer<GSource>?, UnsafeMutablePointer<gint>?) -> gboolean
    package typealias Check = @convention(c) (UnsafeMutablePointer<GSource>?) -> gboolean
    package typealias Dispatch = @convention(c) (UnsafeMutablePointer<GSource>?, GSourceFunc?, gpointer?) -> gboolean

    /// Where the object's pointer lives in the source's allocation: after GLib's fields,
    /// aligned. Computed, so a constant where it is used (a stored static is a lazily made
    /// global, looked up at each use).
    @inlinable static var objectOffset: Int {
        let alignment = MemoryLayout<UnsafeMutableRawPointer>.alignment
        return (MemoryLayout<GSource>.size + alignment - 1) / alignment * alignment
    }

    /// A function table for sources of one kind, whose finalize releases the object. GLib keeps
    /// the pointer for each source's life: make one table per kind, once (a `static let`); it is
    /// never freed and never written after it is made.
    package static func functions(
        prepare: Prepare, check: Check, dispatch: Dispatch
    ) -> UnsafeMutablePointer<GSourceFuncs> {
        let functions = UnsafeMutablePointer<GSourceFuncs>.allocate(capacity: 1)
        functions.initialize(
            to: GSourceFuncs(
                prepare: prepare, check: check, dispatch: dispatch, finalize: releaseObject, closure_callback: nil,
                closure_marshal: nil))
        return functions
    }

    /// A new, unattached source (one reference, the caller's) with `functions` (made by
    /// ``functions(prepare:check:dispatch:)``), owning `object`.
    package static func make(
        with functions: UnsafeMutablePointer<GSourceFuncs>, owning object: AnyObject
    ) -> UnsafeMutablePointer<GSource> {
        let source = g_source_new(functions, guint(objectOffset + MemoryLayout<UnsafeMutableRawPointer>.size))!
        objectSlot(of: source).initialize(to: Unmanaged.passRetained(object).toOpaque())
        return source
    }

    /// The object `source` owns (a source ``make(with:owning:)`` made with an `Object`).
    /// Inlinable: GLib's callbacks look it up at each prepare, check and dispatch.
    @inlinable
    package static func object<Object: AnyObject>(
        of source: UnsafeMutablePointer<GSource>, as _: Object.Type = Object.self
    ) -> Object {
        Unmanaged<Object>.fromOpaque(objectSlot(of: source).pointee).takeUnretainedValue()
    }

    /// Removes `source` from its context (its functions are not called again) and drops the
    /// caller's reference; GLib finalizes it once its other references go.
    package static func destroy(_ source: UnsafeMutablePointer<GSource>) {
        g_source_destroy(source)
        g_source_unref(source)
    }

    @inlinable static func objectSlot(
        of source: UnsafeMutablePointer<GSource>
    ) -> UnsafeMutablePointer<UnsafeMutableRawPointer> {
        (UnsafeMutableRawPointer(source) + objectOffset).assumingMemoryBound(to: UnsafeMutableRawPointer.self)
    }
}

/// GLib's finalize, when the last reference to a source goes, on whichever thread dropped it:
/// releases the object (GLib frees the source right after).
private func releaseObject(_ source: UnsafeMutablePointer<GSource>?) {
    Unmanaged<AnyObject>.fromOpaque(ObjectGSource.objectSlot(of: source!).pointee).release()
}
