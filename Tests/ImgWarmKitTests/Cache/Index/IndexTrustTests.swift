#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// Whether an index file is acted on (docs/security.md), by table.
@Suite struct IndexTrustTests {
    @Test(arguments: [
        // owner, running user, folder mode, owner in the folder's group → trusted
        (uid_t(1000), uid_t(1000), UInt32(0o1777), false, true),   // one's own, anywhere
        (1000, 1000, 0o2775, false, true),
        (1001, 1000, 0o1777, true, false),                        // world-writable, sticky: never another's
        (1001, 1000, 0o0777, true, false),                        // world-writable: never another's
        (0, 1000, 0o1777, true, false),                           // not root's either
        (1001, 0, 0o3777, true, false),                           // setgid does not help a world-writable folder
        (1001, 1000, 0o2775, true, true),                         // team folder, a member
        (1001, 1000, 0o2775, false, false),                       // team folder, no member
        (1001, 1000, 0o2770, true, true),
        (1001, 1000, 0o0775, true, false),                        // group-writable, no setgid
        (1001, 1000, 0o0755, false, true),                        // only its owner (or root) may write
        (1001, 0, 0o0700, false, true),
    ])
    func trustTable(owner: uid_t, runningUser: uid_t, folderMode: UInt32, member: Bool, trusted: Bool) {
        #expect(IndexTrust.trusts(owner: owner, runningUser: runningUser, folderMode: folderMode, ownerInFolderGroup: member) == trusted)
    }

    /// An index file with a second name (a hard link) in a folder others
    /// may write: refused, whoever owns it; one name, or a folder only its
    /// owner may write: the owner rule alone.
    @Test(arguments: [
        (UInt(2), UInt32(0o1777), true), (2, 0o0777, true), (2, 0o2775, true), (2, 0o0775, true), (9, 0o2770, true),
        (2, 0o0755, false), (2, 0o0700, false), (1, 0o1777, false), (1, 0o2775, false), (0, 0o1777, false),
    ])
    func linkedIndexFiles(links: UInt, folderMode: UInt32, refused: Bool) {
        #expect(IndexTrust.refusesLinks(links: links, folderMode: folderMode) == refused)
    }

    /// Membership from the password and group databases: a user is in its
    /// primary group; every supplementary member listed in /etc/group is in
    /// that group; nobody (65534) is not in root's group.
    @Test func membershipComesFromTheGroupDatabase() throws {
        #expect(IndexTrust.isMember(0, of: 0))
        #expect(!IndexTrust.isMember(65534, of: 0) || getpwuid(65534) == nil)
        setgrent()
        defer { endgrent() }
        while let g = getgrent() {
            guard var member = g.pointee.gr_mem else { continue }
            while let m = member.pointee {
                if let pw = getpwnam(m) { #expect(IndexTrust.isMember(pw.pointee.pw_uid, of: g.pointee.gr_gid), "\(String(cString: m))") }
                member += 1
            }
        }
    }
}
