import Foundation

/// Runs a helper program (mount, openssl, ...) and returns its status and
/// output; nil when it cannot be started.
@discardableResult
public func runTool(_ path: String, _ args: [String]) -> (status: Int32, output: String)? {
    guard FileManager.default.isExecutableFile(atPath: path) else { return nil }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    guard (try? p.run()) != nil else { return nil }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The first of `names` found on the usual PATH directories.
public func findTool(_ names: String...) -> String? {
    let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        + ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    for name in names {
        for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
    }
    return nil
}
