#if canImport(Glibc)
import Glibc
#endif

/// One regular file of a cache folder, as SDWebImage's enumeration sees it.
public struct CacheFileRecord: Sendable {
    /// Path relative to the cache folder (`<md5>.jpg`, or `sub/x` in caches
    /// that hold nested folders).
    public var relativePath: String
    /// Logical length in bytes.
    public var size: Int64
    /// Allocated size on disk (st_blocks * 512), what SDWebImage sums.
    public var allocatedSize: Int64
    public var accessTime: Double
    public var modificationTime: Double
    public var changeTime: Double
}

/// Walks a cache folder the way SDWebImage's `removeExpiredData` does:
/// recursively, skipping hidden (dot) files and folders, and yielding only
/// regular files, never directories.
public enum CacheScanner {
    public static func scan(_ directory: String, _ visit: (CacheFileRecord) throws -> Void) rethrows {
        try walk(directory: directory, prefix: "", visit)
    }

    private static func walk(directory: String, prefix: String, _ visit: (CacheFileRecord) throws -> Void) rethrows {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        let dfd = dirfd(dir)
        var subdirs: [String] = []
        while let ent = readdir(dir) {
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasPrefix(".") { continue }  // hidden, ".", ".."
            var st = stat()
            guard fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                subdirs.append(name)
            case S_IFREG:
                try visit(CacheFileRecord(
                    relativePath: prefix + name,
                    size: Int64(st.st_size),
                    allocatedSize: Int64(st.st_blocks) * 512,
                    accessTime: seconds(st.st_atim),
                    modificationTime: seconds(st.st_mtim),
                    changeTime: seconds(st.st_ctim)))
            default:
                continue
            }
        }
        for sub in subdirs {
            try walk(directory: directory + "/" + sub, prefix: prefix + sub + "/", visit)
        }
    }

    static func seconds(_ ts: timespec) -> Double {
        Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
