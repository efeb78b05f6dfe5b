#if GLib
import Glibc

/// A real GIO asynchronous call, `g_file_query_info_async`, for the tests of where GIO delivers
/// its callback: to the thread-default context of the thread that made the call (GLib's global
/// default context where the thread has none). GIO is loaded with `dlopen` (RunLoopKit links
/// GLib only); its functions are declared here with their C shapes.
enum GIO {
    private typealias AsyncReady =
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
        ) -> Void
    private typealias NewForPath = @convention(c) (UnsafePointer<CChar>) -> UnsafeMutableRawPointer?
    private typealias QueryInfoAsync =
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafePointer<CChar>, UInt32, Int32, UnsafeMutableRawPointer?, AsyncReady?,
            UnsafeMutableRawPointer?
        ) -> Void
    private typealias QueryInfoFinish =
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
        ) -> UnsafeMutableRawPointer?
    private typealias ObjectUnref = @convention(c) (UnsafeMutableRawPointer?) -> Void

    private struct Functions: @unchecked Sendable {
        let newForPath: NewForPath
        let queryInfoAsync: QueryInfoAsync
        let queryInfoFinish: QueryInfoFinish
        let objectUnref: ObjectUnref
    }

    /// GIO's functions, or nil when libgio cannot be loaded (the test then fails saying so).
    private static let functions: Functions? = {
        guard let gio = dlopen("libgio-2.0.so.0", RTLD_NOW) else { return nil }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(gio, name).map { unsafeBitCast($0, to: type) }
        }
        guard let newForPath = symbol("g_file_new_for_path", as: NewForPath.self),
            let queryInfoAsync = symbol("g_file_query_info_async", as: QueryInfoAsync.self),
            let queryInfoFinish = symbol("g_file_query_info_finish", as: QueryInfoFinish.self),
            let objectUnref = symbol("g_object_unref", as: ObjectUnref.self)
        else { return nil }
        return Functions(
            newForPath: newForPath, queryInfoAsync: queryInfoAsync, queryInfoFinish: queryInfoFinish,
            objectUnref: objectUnref)
    }()

    /// What the call's callback needs: the file, and what to tell.
    private final class Call {
        let file: UnsafeMutableRawPointer
        let completion: (Bool) -> Void
        init(file: UnsafeMutableRawPointer, completion: @escaping (Bool) -> Void) {
            self.file = file
            self.completion = completion
        }
    }

    private static let ready: AsyncReady = { _, result, data in
        let call = Unmanaged<Call>.fromOpaque(data!).takeRetainedValue()
        let functions = GIO.functions!
        let info = functions.queryInfoFinish(call.file, result, nil)
        if let info { functions.objectUnref(info) }
        functions.objectUnref(call.file)
        call.completion(info != nil)
    }

    /// Starts `g_file_query_info_async` for `path`'s type on the calling thread; `completion`
    /// runs where GIO delivers the callback, with whether the query succeeded. False when GIO
    /// cannot be loaded (nothing started).
    static func queryFileInfo(_ path: String, completion: @escaping (Bool) -> Void) -> Bool {
        guard let functions, let file = functions.newForPath(path) else { return false }
        let call = Unmanaged.passRetained(Call(file: file, completion: completion)).toOpaque()
        // G_FILE_QUERY_INFO_NONE, G_PRIORITY_DEFAULT, no cancellable.
        functions.queryInfoAsync(file, "standard::type", 0, 0, nil, ready, call)
        return true
    }
}
#endif
