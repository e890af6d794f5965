import Foundation

/// Where the cache is when `--cache` is not given: the location policy,
/// kept apart from DiskCache, which only reads and writes the folder it is
/// given.
public enum CacheLocation {
    /// The default folder: `${XDG_CACHE_HOME:-$HOME/.cache}/` and the
    /// layout's folder (`com.hackemist.SDImageCache/default` for SDWebImage).
    public static func defaultDirectory(layout: CacheLayoutKind = .sdwebimage,
                                        environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit = environment["IMGWARM_CACHE"], !explicit.isEmpty { return explicit }
        let base: String
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            base = xdg
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.cache"
        }
        return base + "/" + layout.defaultFolder
    }
}
