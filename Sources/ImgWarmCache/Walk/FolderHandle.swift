#if canImport(Glibc)
import Glibc
#endif
import CFileScan
import ImgWarmSupport

/// A folder opened once, with `O_NOFOLLOW`, and what it was when opened
/// (device, inode, owner, mode). Every operation inside it goes relative to
/// `fd`, so a name swapped for a symbolic link after the open cannot lead
/// an unlink, a rename or a create out of it (by path, a
/// neighbour who swapped `.imgwarm/tmp` for a link made the stale-temp
/// clean-up delete another folder's files).
public final class FolderHandle: @unchecked Sendable {  // immutable after init; fd closed in deinit only
    public let fd: Int32
    /// For messages only; never opened again by this path.
    public let path: String
    public let identity: Identity
    /// Opened for reading (getdents); else O_PATH, which the *at calls take.
    public let listable: Bool

    /// What makes a folder the same folder: device and inode.
    public struct Identity: Equatable, Sendable {
        public var device: UInt64
        public var inode: UInt64
        public var owner: uid_t
        public var mode: UInt32

        init(_ raw: imgwarm_identity_t) {
            device = raw.device
            inode = raw.inode
            owner = uid_t(raw.owner)
            mode = raw.mode
        }

        public static func == (a: Identity, b: Identity) -> Bool { a.device == b.device && a.inode == b.inode }

        /// Group or world may create, rename and delete names in it.
        public var othersMayWrite: Bool { mode & UInt32(S_IWGRP | S_IWOTH) != 0 }
    }

    private init(fd: Int32, path: String, identity: Identity, listable: Bool) {
        self.fd = fd
        self.path = path
        self.identity = identity
        self.listable = listable
    }

    deinit { close(fd) }

    /// Opens `name` relative to `parent` (AT_FDCWD: `name` is a path whose
    /// earlier components are followed as the user named them). `listing`:
    /// read permission is needed (else O_PATH is taken when reading is
    /// refused). Throws a one-line `ImgWarmError` naming `path`: missing,
    /// a symbolic link, not a folder, or not openable.
    public static func open(_ name: String, in parent: Int32, path: String, listing: Bool) throws -> FolderHandle {
        var fd = imgwarm_open_folder_at(parent, name, 1)
        var listable = true
        if fd == -EACCES && !listing {
            fd = imgwarm_open_folder_at(parent, name, 0)
            listable = false
        }
        if fd < 0 { throw openError(-fd, name: name, in: parent, path: path) }
        var raw = imgwarm_identity_t()
        let e = imgwarm_identity(fd, &raw)
        if e != 0 {
            close(fd)
            throw ImgWarmError.cache(path: path, reason: "cannot open folder: \(errnoString(e))", errno: e)
        }
        return FolderHandle(fd: fd, path: path, identity: Identity(raw), listable: listable)
    }

    /// The reason an open with O_NOFOLLOW | O_DIRECTORY failed. ELOOP (and
    /// ENOTDIR) may mean a symbolic link at the name: said so, since that
    /// is the case a user must act on.
    static func openError(_ e: Int32, name: String, in parent: Int32, path: String) -> ImgWarmError {
        if e == ELOOP || e == ENOTDIR {
            var raw = imgwarm_identity_t()
            if imgwarm_identity_at(parent, name, &raw) == 0 && raw.mode & UInt32(S_IFMT) == UInt32(S_IFLNK) {
                return ImgWarmError.cache(path: path, reason: "is a symbolic link; imgwarm does not follow one here (name the folder it points to)",
                                  errno: ELOOP)
            }
            if e == ENOTDIR { return ImgWarmError.cache(path: path, reason: "not a directory", errno: e) }
        }
        // The cache folder itself: worded as every command words it.
        if parent == AT_FDCWD { return CacheFolder.openError(path, e) }
        switch e {
        case ENOENT: return ImgWarmError.cache(path: path, reason: "does not exist", errno: e)
        default: return ImgWarmError.cache(path: path, reason: "cannot open folder: \(errnoString(e))", errno: e)
        }
    }

    /// For imgwarm's own folders (`.imgwarm`, `.imgwarm/tmp`): owned by
    /// the running user or root, and writable by nobody else. Anyone else
    /// who may create or rename names in them could swap a name for a link
    /// between two of imgwarm's calls, or plant temp files for it to remove.
    public func requirePrivate() throws {
        let me = geteuid()
        if identity.owner != me && identity.owner != 0 {
            throw ImgWarmError.cache(path: path, reason: "owned by uid \(identity.owner), not by this user (uid \(me)) or root; "
                + "imgwarm keeps its state only in a folder of its own user (remove it, or run as its owner)", errno: EPERM)
        }
        if identity.othersMayWrite {
            throw ImgWarmError.cache(path: path, reason: "writable by others (mode \(Self.octal(identity.mode & 0o7777))); "
                + "imgwarm keeps its state only in a folder no other user can change (chmod go-w it)", errno: EPERM)
        }
    }

    /// Whether `name` in `parent` is still this folder (not replaced,
    /// not renamed away): the check before deleting inside a folder opened
    /// again since it was listed.
    public func isStill(_ name: String, in parent: Int32) -> Bool {
        var raw = imgwarm_identity_t()
        return imgwarm_identity_at(parent, name, &raw) == 0 && Identity(raw) == identity
    }

    /// Whether the folder has been removed (no name links to it any more).
    var isRemoved: Bool {
        var raw = imgwarm_identity_t()
        return imgwarm_identity(fd, &raw) == 0 && raw.links == 0
    }

    static func octal(_ mode: UInt32) -> String {
        let s = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}
