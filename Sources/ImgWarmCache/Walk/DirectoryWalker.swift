#if canImport(Glibc)
import Glibc
#endif
import CFileScan
import ImgWarmSupport

/// One pass over a cache folder the way SDWebImage's `removeExpiredData`
/// enumerates it: recursively, skipping hidden (dot) files and folders, and
/// handing over regular files only, never directories, symlinks (not
/// followed) or special files.
///
/// Built for millions of files: directories are read with getdents64 into
/// one reused buffer, files are stat'ed with statx relative to the directory
/// fd, and a file's name reaches the visitor as a pointer into that buffer,
/// so no String or Foundation object is made per file.
///
/// Every folder is opened relative to its parent's descriptor with
/// O_NOFOLLOW (the root too: `FolderHandle`), and its name, parent and
/// device and inode are kept (`names`, `parents`, `identities`): whoever
/// deletes in it later (FileRemover) opens it the same way and checks it is
/// still the folder listed. A caller that acts during the walk uses
/// `Entry.directoryFd`, the folder as listed.
///
/// The walk is a loop over an explicit stack, never a recursion on the
/// thread's stack: a folder nested 20,000 deep (anyone who may write a
/// shared cache can make one) costs a name and an identity per level, not
/// a stack frame and a full path. At most `maxOpenFolders` descriptors are
/// open at once; a level whose descriptor was closed is opened again by
/// name from its parent, with O_NOFOLLOW, and must still be the folder
/// listed (device and inode), else the rest of it is skipped. Folders more
/// than `maxDepth` levels below the root are not walked (counted in
/// `tooDeepFolders`), so nothing in them is ever removed.
public struct DirectoryWalker {
    /// A regular file, valid only during the visit call.
    public struct Entry {
        /// Index in `names` of the folder that holds the file (0: the root).
        public var directoryIndex: Int
        /// That folder's path relative to the root ("" for the root).
        public var directoryPath: String
        /// That folder's descriptor, open for the time of the call: remove
        /// or open the file relative to it (`unlinkat`, `openat` with
        /// O_NOFOLLOW), never by path.
        public var directoryFd: Int32
        /// NUL-terminated name inside the directory, and its length.
        public var name: UnsafePointer<CChar>
        public var nameLength: Int
        public var info: imgwarm_stat

        public var nameString: String { String(cString: name) }
    }

    /// Folders more than this many levels below the root are not walked.
    /// No library nests that deep (SDWebImage and Kingfisher write one
    /// flat folder); a tree that deep was made by someone else.
    public static let maxDepth = 1000
    /// Descriptors the walk holds open at most (the root's included).
    public static let maxOpenFolders = 64

    /// Per folder walked, in the order they were entered: its name in its
    /// parent ("" for the root), the index of its parent (0 for the root
    /// itself), and what it was when listed.
    public private(set) var names: [String] = []
    public private(set) var parents: [Int] = []
    public private(set) var identities: [FolderHandle.Identity] = []
    /// Called for each name that is neither a regular file nor a folder
    /// (a symbolic link, a FIFO, a socket, a device): `cache verify`
    /// reports them. The file type is the `S_IFMT` bits.
    public var onOther: ((_ directoryFd: Int32, _ directoryPath: String, _ name: UnsafePointer<CChar>, _ type: UInt32) -> Void)?
    /// Called after a sub-folder was walked, with its parent's descriptor
    /// and its name: `cache clear` removes it there when it is empty.
    public var onLeaveFolder: ((_ parentFd: Int32, _ name: String, _ index: Int, _ parentIndex: Int) -> Void)?
    /// Sub-folders that could not be opened or read (permissions, removed
    /// or replaced meanwhile); SDWebImage's enumerator skips them too.
    public private(set) var unreadableDirectories = 0
    public private(set) var firstDirectoryError: ImgWarmError?
    /// Sub-folders more than `maxDepth` levels deep, not walked.
    public private(set) var tooDeepFolders = 0
    /// The first of them, relative to the root.
    public private(set) var firstTooDeepFolder: String?
    /// False: the root folder's files only (Nuke's `DataCache` lists its
    /// folder without descending).
    public var descends = true

    public init() {}

    /// The path of folder `index` relative to the root ("" for the root).
    public func relativePath(ofFolder index: Int) -> String {
        var parts: [String] = []
        var i = index
        while i != 0 {
            parts.append(names[i])
            i = parents[i]
        }
        return parts.reversed().joined(separator: "/")
    }

    /// What the walk skipped (folders too deep, folders it could not
    /// read), as one line for a command's standard error; nil when nothing.
    public var skippedSummary: String? {
        if let error = firstDirectoryError {
            return "\(error.description)" + (unreadableDirectories > 1 ? " (and \(unreadableDirectories - 1) more folders)" : "") + ": skipped"
        }
        return nil
    }

    /// Walks `root` (opened here with O_NOFOLLOW: a symbolic link at the
    /// path is an error, not followed). Returns an error (rather than
    /// throwing it, so that the walk only rethrows the visitor's errors)
    /// when the root itself cannot be read; problems below the root are
    /// counted in `unreadableDirectories`.
    @discardableResult
    public mutating func walk(_ root: String, _ visit: (Entry) throws -> Void) rethrows -> ImgWarmError? {
        let handle: FolderHandle
        do {
            handle = try FolderHandle.open(root, in: AT_FDCWD, path: root, listing: true)
        } catch let error as ImgWarmError {
            return error.errno == ENOENT ? CacheFolder.openError(root, ENOENT) : error
        } catch {
            return ImgWarmError.cache(path: root, reason: "\(error)")
        }
        return try walk(handle, visit)
    }

    /// One folder on the way down: where it is in `names`, its descriptor
    /// (-1 while closed to stay under `maxOpenFolders`), the sub-folders
    /// still to walk, and how long the relative path is up to it.
    private struct Level {
        var index: Int
        var fd: Int32
        var pending: [String]
        var next = 0
        var pathLength: Int
    }

    /// Walks the folder `root` was opened on.
    @discardableResult
    public mutating func walk(_ root: FolderHandle, _ visit: (Entry) throws -> Void) rethrows -> ImgWarmError? {
        // A descriptor of its own: getdents moves the file offset.
        let rootFd = openat(root.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if rootFd < 0 {
            let e = errno
            return ImgWarmError.cache(path: root.path, reason: "cannot read cache folder: \(errnoString(e))", errno: e)
        }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.bufferSize, alignment: 8)
        defer { buffer.deallocate() }
        names = [""]
        parents = [0]
        identities = [root.identity]
        unreadableDirectories = 0
        firstDirectoryError = nil
        tooDeepFolders = 0
        firstTooDeepFolder = nil
        var stack = [Level(index: 0, fd: rootFd, pending: [], pathLength: 0)]
        // The relative path of the folder on top of the stack, as bytes:
        // one buffer, cut back when the walk climbs.
        var path: [UInt8] = []
        var openCount = 1
        defer { for level in stack where level.fd >= 0 { close(level.fd) } }
        var subfolders: [String] = []
        if let error = try readDirectory(fd: rootFd, index: 0, path: "", buffer: buffer, subfolders: &subfolders, visit) {
            return ImgWarmError.cache(path: root.path, reason: "cannot read cache folder: \(errnoString(error))", errno: error)
        }
        if !descends { return nil }
        stack[0].pending = subfolders
        while let top = stack.last {
            if top.next < top.pending.count {
                let name = top.pending[top.next]
                stack[stack.count - 1].next += 1
                if top.next == top.pending.count - 1 {
                    // The last sub-folder: its name is kept in `names`, the list is not needed any more.
                    stack[stack.count - 1].pending = []
                    stack[stack.count - 1].next = 0
                }
                path.removeSubrange(top.pathLength...)
                if !path.isEmpty { path.append(0x2F) }
                path.append(contentsOf: name.utf8)
                let childPath = String(decoding: path, as: UTF8.self)
                if stack.count > Self.maxDepth {
                    tooDeepFolders += 1
                    if firstTooDeepFolder == nil { firstTooDeepFolder = childPath }
                    unreadableDirectories += 1
                    if firstDirectoryError == nil {
                        firstDirectoryError = ImgWarmError.cache(path: Self.shortened(childPath), reason: "more than \(Self.maxDepth) folders deep: not walked, nothing in it removed")
                    }
                    continue
                }
                guard let parentFd = reopen(&stack, level: stack.count - 1, openCount: &openCount) else { continue }
                // O_NOFOLLOW: a folder swapped for a symlink since getdents
                // is not followed out of the cache.
                let child = openat(parentFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if child < 0 {
                    noteUnreadable(childPath, errno)
                    continue
                }
                var raw = imgwarm_identity_t()
                if imgwarm_identity(child, &raw) != 0 {
                    noteUnreadable(childPath, errno)
                    close(child)
                    continue
                }
                names.append(name)
                parents.append(top.index)
                identities.append(FolderHandle.Identity(raw))
                let childIndex = names.count - 1
                openCount += 1
                stack.append(Level(index: childIndex, fd: child, pending: [], pathLength: path.count))
                closeOldest(&stack, openCount: &openCount)
                subfolders.removeAll(keepingCapacity: true)
                if let error = try readDirectory(fd: child, index: childIndex, path: childPath, buffer: buffer,
                                                 subfolders: &subfolders, visit) {
                    noteUnreadable(childPath, error)
                }
                stack[stack.count - 1].pending = subfolders
            } else {
                // Done with this folder: climb back to its parent.
                stack.removeLast()
                if top.fd >= 0 {
                    close(top.fd)
                    openCount -= 1
                }
                guard !stack.isEmpty else { break }
                if let parentFd = reopen(&stack, level: stack.count - 1, openCount: &openCount) {
                    onLeaveFolder?(parentFd, names[top.index], top.index, parents[top.index])
                }
            }
        }
        return nil
    }

    /// Keeps the open descriptors at `maxOpenFolders`: the root's and the
    /// deepest levels' stay open, the shallowest others are closed.
    private func closeOldest(_ stack: inout [Level], openCount: inout Int) {
        var i = 1
        while openCount > Self.maxOpenFolders && i < stack.count {
            if stack[i].fd >= 0 {
                close(stack[i].fd)
                stack[i].fd = -1
                openCount -= 1
            }
            i += 1
        }
    }

    /// The descriptor of `stack[level]`, opened again when it was closed:
    /// from the deepest open level above it, each folder by name with
    /// O_NOFOLLOW, each checked to be the folder listed. When one is not
    /// (renamed, replaced, a link now), that level and all below it are
    /// dropped from the stack (nothing more is walked or removed in them)
    /// and nil is returned.
    private mutating func reopen(_ stack: inout [Level], level: Int, openCount: inout Int) -> Int32? {
        if stack[level].fd >= 0 { return stack[level].fd }
        var open = level
        while stack[open].fd < 0 { open -= 1 }  // the root's is never closed
        for i in (open + 1)...level {
            let index = stack[i].index
            var fd = openat(stack[i - 1].fd, names[index], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            var raw = imgwarm_identity_t()
            if fd >= 0 && (imgwarm_identity(fd, &raw) != 0 || FolderHandle.Identity(raw) != identities[index]) {
                close(fd)
                fd = -1
                errno = ESTALE
            }
            if fd < 0 {
                noteUnreadable(relativePath(ofFolder: index), errno == ENOENT ? ESTALE : errno)
                for dropped in stack[i...] where dropped.fd >= 0 {
                    close(dropped.fd)
                    openCount -= 1
                }
                stack.removeSubrange(i...)
                return nil
            }
            stack[i].fd = fd
            openCount += 1
            closeOldest(&stack, openCount: &openCount)
        }
        return stack[level].fd >= 0 ? stack[level].fd : nil
    }

    /// 256 KiB: a few syscalls for a directory of thousands of entries.
    static let bufferSize = 256 * 1024

    /// Reads one directory to its end, visiting its files and collecting
    /// its sub-folders' names. Returns an errno when reading failed.
    private mutating func readDirectory(fd: Int32, index: Int, path parentPath: String, buffer: UnsafeMutableRawPointer,
                                        subfolders: inout [String], _ visit: (Entry) throws -> Void) rethrows -> Int32? {
        var info = imgwarm_stat()
        while true {
            let count = imgwarm_getdents(fd, buffer, UInt(Self.bufferSize))
            if count < 0 { return Int32(-count) }
            if count == 0 { break }
            var offset = 0
            while offset < count {
                let record = buffer + offset
                offset += Int(imgwarm_dirent_reclen(record))
                guard let name = imgwarm_dirent_name(record) else { continue }
                // Hidden entries, "." and "..": SDWebImage's
                // NSDirectoryEnumerationSkipsHiddenFiles.
                if name.pointee == 0x2E { continue }
                let type = Int32(imgwarm_dirent_type(record))
                if type == Int32(IMGWARM_DT_DIR) {
                    // A folder is walked or, where the library lists one
                    // folder only (Nuke), not part of the cache at all.
                    if descends { subfolders.append(String(cString: name)) }
                    continue
                }
                // Only regular files and entries of unknown type (some
                // filesystems leave d_type empty) need a stat.
                guard type == Int32(IMGWARM_DT_REG) || type == Int32(IMGWARM_DT_UNKNOWN) else {
                    if let onOther { onOther(fd, parentPath, name, Self.modeType(dirent: type)) }
                    continue
                }
                // Gone since getdents (a concurrent prune): not an entry.
                guard imgwarm_statat(fd, name, &info) == 0 else { continue }
                switch info.mode & UInt32(S_IFMT) {
                case UInt32(S_IFREG):
                    try visit(Entry(directoryIndex: index, directoryPath: parentPath, directoryFd: fd, name: name,
                                    nameLength: strlen(name), info: info))
                case UInt32(S_IFDIR):
                    if descends { subfolders.append(String(cString: name)) }
                default:
                    onOther?(fd, parentPath, name, info.mode & UInt32(S_IFMT))
                }
            }
        }
        return nil
    }

    /// A path of a thousand folders, cut for a one-line message: its start,
    /// `…`, its end.
    static func shortened(_ path: String) -> String {
        let bytes = Array(path.utf8)
        guard bytes.count > 160 else { return path }
        return String(decoding: bytes[..<80], as: UTF8.self) + "…" + String(decoding: bytes[(bytes.count - 60)...], as: UTF8.self)
    }

    /// The S_IFMT bits for a d_type value.
    static func modeType(dirent type: Int32) -> UInt32 {
        switch type {
        case Int32(IMGWARM_DT_LNK): return UInt32(S_IFLNK)
        case Int32(IMGWARM_DT_FIFO): return UInt32(S_IFIFO)
        case Int32(IMGWARM_DT_SOCK): return UInt32(S_IFSOCK)
        case Int32(IMGWARM_DT_CHR): return UInt32(S_IFCHR)
        case Int32(IMGWARM_DT_BLK): return UInt32(S_IFBLK)
        default: return 0
        }
    }

    /// How `cache verify` names a file type that is no entry.
    public static func describe(type: UInt32) -> String {
        switch type {
        case UInt32(S_IFLNK): return "symbolic link"
        case UInt32(S_IFIFO): return "FIFO"
        case UInt32(S_IFSOCK): return "socket"
        case UInt32(S_IFCHR): return "character device"
        case UInt32(S_IFBLK): return "block device"
        default: return "special file"
        }
    }

    private mutating func noteUnreadable(_ path: String, _ error: Int32) {
        // Removed between getdents and openat: nothing was there to read.
        if error == ENOENT { return }
        unreadableDirectories += 1
        if firstDirectoryError == nil {
            firstDirectoryError = ImgWarmError.cache(path: path, reason: "cannot read folder: \(errnoString(error))", errno: error)
        }
    }
}

extension imgwarm_stat {
    /// Allocated bytes on disk: what SDWebImage sums (NSURLTotalFileAllocatedSizeKey).
    package var allocatedBytes: Int64 { blocks * 512 }
}
