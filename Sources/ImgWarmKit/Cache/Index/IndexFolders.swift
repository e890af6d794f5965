#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan

/// The folders an index layout works in, each opened once with O_NOFOLLOW
/// (as `DiskCache.Folders` for the iOS layouts): the cache folder,
/// and imgwarm's `.imgwarm/tmp` for the temp files of a store, opened
/// relative to it and checked private. The journal, the value files, and
/// flutter's files are named relative to these descriptors only, so a name
/// swapped for a symbolic link leads nowhere outside the cache.
final class IndexFolders: @unchecked Sendable {  // guarded by `lock`
    let directory: String
    private let lock = NSLock()
    private var rootHandle: FolderHandle?
    private var tempHandle: FolderHandle?
    private var retired: [FolderHandle] = []
    private let tempCounter = AtomicCounter()

    init(directory: String) {
        self.directory = directory
    }

    /// The cache folder, opened on first use (a link at its name is
    /// refused with one line). `create`: made when missing.
    func root(create: Bool) throws -> FolderHandle {
        lock.lock()
        defer { lock.unlock() }
        if let rootHandle { return rootHandle }
        if create { try DiskCache.makeDirectories(directory) }
        let handle = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: true)
        rootHandle = handle
        return handle
    }

    /// `.imgwarm/tmp`, made when missing and checked as `DiskCache.prepare`
    /// checks it; `again`: the one opened before was removed (a concurrent
    /// `cache clear --all`), made and opened anew.
    func temp(again: Bool = false) throws -> FolderHandle {
        let root = try root(create: true)
        lock.lock()
        defer { lock.unlock() }
        if let tempHandle, !again { return tempHandle }
        if let tempHandle { retired.append(tempHandle) }
        let state = try DiskCache.makeFolder(".imgwarm", in: root.fd, path: directory + "/.imgwarm")
        try state.requirePrivate()
        let temp = try DiskCache.makeFolder("tmp", in: state.fd, path: directory + "/.imgwarm/tmp")
        try temp.requirePrivate()
        tempHandle = temp
        return temp
    }

    /// A new temp file in `.imgwarm/tmp` under a name no one can guess
    /// (O_EXCL | O_NOFOLLOW: nothing planted is written through): the
    /// folder's descriptor, the name and the open descriptor.
    func createTemp(tag: String, mode: mode_t = 0o644) throws -> (folder: FolderHandle, name: String, fd: Int32) {
        var folder = try temp()
        var again = false
        while true {
            let name = DiskCache.tempPrefix + tag + FixedHex.digits16(imgwarm_unpredictable(tempCounter.next())) + ".tmp"
            let fd = openat(folder.fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 { return (folder, name, fd) }
            let e = errno
            if e == EEXIST { continue }
            if e == ENOENT && !again {
                again = true
                folder = try temp(again: true)
                continue
            }
            throw ImgWarmError.cache(path: directory + "/.imgwarm/tmp/" + name, reason: "cannot create temp file: \(errnoString(e))", errno: e)
        }
    }

    /// What is at `name` in `dirfd` (not followed) counts as an entry's
    /// file under `DiskCache.countsAsEntry`: its length, else nil.
    static func entryFileSize(_ name: String, in folder: FolderHandle) -> Int64? {
        var st = stat()
        guard fstatat(folder.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0,
              DiskCache.countsAsEntry(type: st.st_mode & S_IFMT, owner: st.st_uid, runningUser: geteuid(),
                                      othersMayWrite: folder.identity.othersMayWrite) else { return nil }
        return Int64(st.st_size)
    }

    /// nil when `name` in `dirfd` is missing or a regular file, else the
    /// one-line reason it is refused (a link is never followed).
    static func notARegularFile(_ name: String, in dirfd: Int32) -> String? {
        var st = stat()
        guard fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFLNK: return "is a symbolic link; imgwarm does not follow one here (left as it is)"
        case S_IFDIR: return "is a folder, not a file (left as it is)"
        default: return "is not a regular file (left as it is)"
        }
    }
}
