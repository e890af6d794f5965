#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan
import ImgWarmSupport

/// The folders an index layout works in, each opened once with O_NOFOLLOW
/// (as `CacheFolders` for the plain folders): the cache folder, and
/// imgwarm's `.imgwarm/tmp` for the temp files of a store, made, opened and
/// checked by `StateFolders`, the temp files named and created by
/// `TempFiles`, their bytes written by the cache's one `writer`. The journal, the value files, and
/// flutter's files are named relative to these descriptors only, so a name
/// swapped for a symbolic link leads nowhere outside the cache.
final class IndexFolders: @unchecked Sendable {  // guarded by `lock`
    let directory: String
    private let lock = NSLock()
    private var rootHandle: FolderHandle?
    private var tempHandle: FolderHandle?
    private var retired: [FolderHandle] = []
    private let tempCounter = AtomicCounter()
    /// Copies a store's bytes into its temp file.
    let writer: FileWriter

    init(directory: String, writer: FileWriter = .direct) {
        self.directory = directory
        self.writer = writer
    }

    /// The cache folder, opened on first use (a link at its name is
    /// refused with one line). `create`: made when missing.
    func root(create: Bool) throws -> FolderHandle {
        lock.lock()
        defer { lock.unlock() }
        if let rootHandle { return rootHandle }
        if create { try StateFolders.makeDirectories(directory) }
        let handle = try FolderHandle.open(directory, in: AT_FDCWD, path: directory, listing: true)
        rootHandle = handle
        return handle
    }

    /// `.imgwarm/tmp`, made when missing and checked (`StateFolders.make`); `again`: the one opened before was removed (a concurrent
    /// `cache clear --all`), made and opened anew.
    func temp(again: Bool = false) throws -> FolderHandle {
        let root = try root(create: true)
        lock.lock()
        defer { lock.unlock() }
        if let tempHandle, !again { return tempHandle }
        if let tempHandle { retired.append(tempHandle) }
        let temp = try StateFolders.make(in: root, directory: directory).temp
        tempHandle = temp
        return temp
    }

    /// A new temp file in `.imgwarm/tmp` under a name no one can guess
    /// (O_EXCL | O_NOFOLLOW: nothing planted is written through): the
    /// folder's descriptor, the name and the open descriptor.
    func createTemp(tag: String, mode: mode_t = 0o644) throws -> (folder: FolderHandle, name: String, fd: Int32) {
        var folder = try temp()
        var created = FileIO.createExclusive(in: folder.fd, mode: mode) { TempFiles.runName(tag: tag, counter: tempCounter) }
        if created.fd < 0 && created.error == ENOENT {
            folder = try temp(again: true)
            created = FileIO.createExclusive(in: folder.fd, mode: mode) { TempFiles.runName(tag: tag, counter: tempCounter) }
        }
        guard created.fd >= 0 else {
            throw ImgWarmError.cache(path: StateFolders.tempPath(of: directory) + "/" + created.name,
                             reason: "cannot create temp file: \(errnoString(created.error))", errno: created.error)
        }
        return (folder, created.name, created.fd)
    }

    /// What is at `name` in `dirfd` (not followed) counts as an entry's
    /// file under `FolderBackend.countsAsEntry`: its length, else nil.
    static func entryFileSize(_ name: String, in folder: FolderHandle) -> Int64? {
        var st = stat()
        guard fstatat(folder.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0,
              FolderBackend.countsAsEntry(type: st.st_mode & S_IFMT, owner: st.st_uid, runningUser: geteuid(),
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
