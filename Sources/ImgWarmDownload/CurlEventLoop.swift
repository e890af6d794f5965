import CCurl
import Foundation
import ImgWarmSupport

/// An engine thread: one curl multi handle driven by curl_multi_poll and
/// curl_multi_perform. It owns every scheduling structure (jobs, queue, retry
/// timers, transfers), so none of them needs a lock; other threads reach it
/// only through the mailbox. Completions run here, outside any lock.
// @unchecked Sendable: its mutable state is touched only on its own thread; other threads reach it through `mailbox`.
final class CurlEventLoop: @unchecked Sendable {
    let mailbox: EngineMailbox
    private let config: DownloaderConfiguration
    private let multi: UnsafeMutableRawPointer
    private var jobs = JobTable()
    private var queue = RequestQueue()
    /// Requests in flight on this thread, and per host with each host's cap.
    private var inFlight = 0
    private var slots: HostSlots
    /// Shared with the other engine threads: rates, pauses, bandwidth, figures.
    private let traffic: HostTraffic
    private let index: Int
    /// Hosts refused by their rate, and when to try them again (monotonic
    /// nanoseconds).
    private var hostWakeups: [HostKey: UInt64] = [:]
    /// Redirect hops whose host's rate had no token: off the multi handle
    /// (still in `transfers`) until `due` (monotonic nanoseconds).
    private var parkedHops: [(transfer: CurlTransfer, url: String, parkedAt: UInt64, due: UInt64)] = []
    private let bandwidth: CurlTransfer.Bandwidth?
    private let memoryPauses = CurlTransfer.MemoryPauses()
    private var retries = RetryTimers()
    private let policy: RetryPolicy
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Monotonic seconds when each transfer's latest redirect hop was sent:
    /// a 429 to it is judged against its own host's last rate cut.
    private var hopStarts: [ObjectIdentifier: Double] = [:]
    private let pool: EasyHandlePool
    private let headers: RequestHeaders
    private var cancelled = false
    private var arrivals: UInt64 = 0
    /// The host of the latest new job: runs of one host's URLs skip the
    /// shared table's lock and hash (about 600 instructions a file).
    private var lastHost: HostKey?
    /// Completions run since the mailbox last heard of them.
    private var completedUnreported = 0
    /// Weak: the thread's closure holds the loop, and Foundation keeps a
    /// Thread's closure for as long as the Thread lives. A strong
    /// reference here would be a cycle: a finished engine would never be
    /// freed, nor the spill folder's descriptor its configuration holds
    /// closed (one more open file per run in a process that runs many).
    private weak var thread: Thread?
    /// Set before the thread starts; read only by `deinit`.
    private var started = false
    private let name: String
    private let running = DispatchGroup()
    /// Longest sleep in curl_multi_poll when nothing is due; wakeups and
    /// socket activity end it earlier.
    private static let idlePollMilliseconds: UInt64 = 1000

    /// `configuration` holds this thread's shares of the limits; `index`
    /// is its place among `loops` threads.
    init(configuration: DownloaderConfiguration, traffic: HostTraffic, index: Int = 0, loops: Int = 1,
         name: String = "imgwarm.download") throws {
        guard let multi = curl_multi_init() else {
            throw ImgWarmError(.engineUnavailable("could not create a multi handle"))
        }
        self.multi = multi
        self.name = name
        self.traffic = traffic
        self.index = index
        config = configuration
        var adaptive: ConcurrencyLimiter.Parameters?
        if configuration.adaptive {
            var p = ConcurrencyLimiter.Parameters()
            p.maximum = Double(min(configuration.concurrency, configuration.perHost ?? Int.max))
            p.initial = min(p.maximum, Double(Self.initialLimit(loops: loops)))
            adaptive = p
        }
        slots = HostSlots(perHost: configuration.perHost, connections: configuration.hostConnections, adaptive: adaptive)
        bandwidth = traffic.limitsBandwidth ? CurlTransfer.Bandwidth(traffic: traffic) : nil
        policy = RetryPolicy(configuration: configuration)
        mailbox = EngineMailbox(multi: multi)
        pool = EasyHandlePool()
        headers = RequestHeaders(config: configuration)
        imgwarm_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        // Our scheduler bounds transfers; these bound sockets the same way.
        imgwarm_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.concurrency)
        // The polite cap on connections per host (HTTP/1.1 and HTTP/2).
        imgwarm_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.hostConnections)
        // curl's own cap on streams per HTTP/2 connection is 100; the
        // server's SETTINGS_MAX_CONCURRENT_STREAMS is the one that should
        // bind, so ours is never below what this thread may have in flight.
        imgwarm_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, max(100, configuration.concurrency))
    }

    /// A loop whose thread never ran (a later loop of the same
    /// `Downloader` could not be made) frees its multi handle here; a
    /// started one frees it on its thread (`tearDown`).
    deinit {
        if !started {
            mailbox.detachMulti()
            curl_multi_cleanup(multi)
        }
    }

    func start() {
        started = true
        running.enter()
        let thread = Thread { [self] in
            run()
            running.leave()
        }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    /// Waits for the thread to end (returns at once when called from it).
    func join() {
        if let thread, Thread.current === thread { return }
        running.wait()
    }

    // MARK: the loop

    private func run() {
        while true {
            let commands = mailbox.take()
            if commands.cancel || commands.shutdown, !cancelled {
                cancelled = true
                cancelEverything()
            }
            for pending in commands.requests { accept(pending) }
            if commands.shutdown {
                reportCompleted()
                break
            }

            let now = Self.now()
            for job in retries.popDue(now: now) { queue.push(job) }
            wakeHosts(now: now)
            resumeParkedHops(now: now)
            startTransfers()
            var stillRunning: Int32 = 0
            curl_multi_perform(multi, &stillRunning)
            collectFinished()
            resumePaused()
            resumeMemoryPaused()
            // Slots freed above: start the next transfers before sleeping
            // (curl then returns from poll at once to drive them).
            startTransfers()
            reportCompleted()
            curl_multi_poll(multi, nil, 0, pollTimeout(), nil)
        }
        tearDown()
    }

    private func accept(_ pending: EngineMailbox.Pending) {
        if cancelled {
            return deliver([pending.completion], .failure(Self.cancelledFailure(attempts: 0, elapsed: 0)))
        }
        arrivals += 1
        let key = JobKey(DownloadJob.coalescingKey(pending.request))
        if let job = jobs[key] {
            job.callers.append(pending.completion)
            queue.raise(job, to: pending.request.priority, arrival: arrivals)
            return
        }
        let hostText = pending.request.hostKey ?? ParsedURL.hostKey(of: pending.request.url)
        let hostKey: HostKey
        if let last = lastHost, last.text == hostText {
            hostKey = last
        } else {
            hostKey = traffic.keys.intern(hostText)
            lastHost = hostKey
        }
        let job = DownloadJob(tableKey: key, request: pending.request, arrival: arrivals, hostKey: hostKey)
        job.callers.append(pending.completion)
        jobs.insert(job)
        queue.push(job)
    }

    /// Whether `job`'s host may start one more now; if so it is counted
    /// in flight here and in `traffic`. A host refused by its rate gets a
    /// wakeup; one refused by its cap is woken by the next
    /// transfer to it that ends.
    private func admit(_ job: DownloadJob) -> Bool {
        let host = job.hostKey
        guard slots.mayStart(host) else { return false }
        if !hostWakeups.isEmpty, hostWakeups[host] != nil { return false }
        if let wait = traffic.admit(host, now: Self.seconds()) {
            hostWakeups[host] = Self.now() + UInt64(max(wait, 0.000_5) * 1e9)
            return false
        }
        slots.started(host)
        return true
    }

    /// Hosts whose wait is over may start again.
    private func wakeHosts(now: UInt64) {
        guard !hostWakeups.isEmpty else { return }
        for (host, due) in hostWakeups where due <= now {
            hostWakeups[host] = nil
            queue.unpark(host)
        }
    }

    /// A transfer admitted by `admit` ended (or never started).
    private func transferEnded(_ job: DownloadJob, succeeded: Bool, latency: Double? = nil,
                               congestion: ConcurrencyLimiter.Reason? = nil, http1: Bool = false) {
        inFlight -= 1
        let host = job.hostKey
        traffic.ended(host, succeeded: succeeded, now: Self.seconds())
        if let change = slots.ended(host, latency: latency, congestion: congestion, http1: http1),
           let line = traffic.limitChanged(host, loop: index, limit: change.to, reason: change.reason) {
            config.onLimitChange?(line)
        }
        queue.unpark(host)
    }

    private func startTransfers() {
        while inFlight < config.concurrency,
              let job = queue.popStartable(admit: admit, freeSlots: { slots.free($0) }) {
            inFlight += 1
            guard let (handle, fresh) = pool.take() else {
                transferEnded(job, succeeded: false)
                finish(job, .failure(failure(job, AttemptFailure(
                    errorClass: .network, status: nil, message: "libcurl could not create a handle",
                    isTransient: false))))
                continue
            }
            job.attempts += 1
            if job.firstStart == nil { job.firstStart = Self.now() }
            let transfer = CurlTransfer(job: job, handle: handle, maxBodyBytes: config.maxBodyBytes, headers: headers,
                                        startedSeconds: Self.seconds(), bandwidth: bandwidth,
                                        memory: config.bodyMemory, memoryPauses: memoryPauses,
                                        spill: config.bodySpill)
            transfer.configure(config, fresh: fresh)
            let added = curl_multi_add_handle(multi, handle)
            guard added == CURLM_OK else {
                pool.give(handle)
                transferEnded(job, succeeded: false)
                finish(job, .failure(failure(job, AttemptFailure(
                    errorClass: .network, status: nil,
                    message: "libcurl refused the transfer: \(String(cString: curl_multi_strerror(added)))",
                    isTransient: false))))
                continue
            }
            transfers[handle] = transfer
        }
    }

    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            // The message dies with curl_multi_remove_handle: copy it first.
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = imgwarm_msg_result(message)
            guard let transfer = transfers[handle] else { continue }
            let outcome: AttemptOutcome
            // A redirect is followed on the same handle and transfer
            // (RedirectRule), or ends the attempt.
            switch transfer.redirect(code: code, allowHTTPRedirect: config.allowHTTPRedirect) {
            case .follow(let url)?:
                curl_multi_remove_handle(multi, handle)
                // The hop counts against the rate of the host it goes to.
                if let wait = traffic.admitHop(traffic.keys.intern(ParsedURL.hostKey(of: url)), now: Self.seconds()) {
                    let now = Self.now()
                    parkedHops.append((transfer, url, now, now + Self.nanoseconds(wait)))
                    continue
                }
                guard let refused = followHop(transfer, url) else { continue }
                outcome = refused
            case .refuse(let errorClass, let message)?:
                var status = 0
                imgwarm_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
                outcome = .failure(AttemptFailure(errorClass: errorClass, status: status, message: message, isTransient: false))
            case nil:
                outcome = transfer.finish(code: code)
            }
            end(transfer, outcome)
        }
    }

    /// Points the transfer at the next hop and hands it back to curl; the
    /// failure when curl refuses it.
    private func followHop(_ transfer: CurlTransfer, _ url: String) -> AttemptOutcome? {
        transfer.follow(url, config: config)
        let added = curl_multi_add_handle(multi, transfer.handle)
        if added == CURLM_OK {
            hopStarts[ObjectIdentifier(transfer)] = Self.seconds()
            return nil
        }
        return .failure(AttemptFailure(
            errorClass: .network, status: nil,
            message: "libcurl refused the redirected transfer: \(String(cString: curl_multi_strerror(added)))",
            isTransient: false))
    }

    /// Parked hops whose wait is over take their host's token and go on
    /// (or wait again, when another hop took it first).
    private func resumeParkedHops(now: UInt64) {
        guard parkedHops.contains(where: { $0.due <= now }) else { return }
        let hops = parkedHops
        parkedHops = []
        for hop in hops {
            guard transfers[hop.transfer.handle] === hop.transfer else { continue }
            if hop.due > now {
                parkedHops.append(hop)
            } else if let wait = traffic.admitHop(traffic.keys.intern(ParsedURL.hostKey(of: hop.url)), now: Self.seconds()) {
                parkedHops.append((hop.transfer, hop.url, hop.parkedAt, now + Self.nanoseconds(wait)))
            } else {
                hop.transfer.waited(nanoseconds: now - hop.parkedAt)
                if let refused = followHop(hop.transfer, hop.url) { end(hop.transfer, refused) }
            }
        }
    }

    private static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(seconds, 0.000_5) * 1e9) }

    /// The attempt on `transfer` is over: the handle goes back to the pool,
    /// the host's counts and limits learn the outcome, the job completes
    /// or waits for its retry.
    /// `outcome` is consumed: its response moves on to the callers (a
    /// copy and a destruction of a `DownloadResponse` cost about 2,000
    /// instructions a file).
    private func end(_ transfer: CurlTransfer, _ outcome: consuming AttemptOutcome) {
        let handle = transfer.handle
        transfers[handle] = nil
        // The last hop's figures, read before the handle is reset.
        let latency = transfer.firstByteLatency()
        let http1 = transfer.wasHTTP1()
        curl_multi_remove_handle(multi, handle)
        pool.give(handle)
        // Most runs follow no redirect: no hashing then.
        let hopStarted = hopStarts.isEmpty ? nil : hopStarts.removeValue(forKey: ObjectIdentifier(transfer))
        // The host that answered: after a redirect, the hop's (whose rate
        // its requests took a token of), not the entry's.
        let answered = transfer.redirectsFollowed > 0 ? traffic.keys.intern(ParsedURL.hostKey(of: transfer.currentURL)) : transfer.job.hostKey
        var succeeded = false
        var congestion: ConcurrencyLimiter.Reason?
        switch outcome {
        case .success, .notModified:
            succeeded = true
            if answered != transfer.job.hostKey { traffic.hopSucceeded(answered, now: Self.seconds()) }
        case .failure(let attempt):
            if attempt.status == 429 || attempt.status == 503 {
                congestion = .throttled
                if let line = traffic.throttled(answered,
                                                startedAt: hopStarted ?? transfer.startedSeconds, now: Self.seconds()) {
                    config.onLimitChange?(line)
                }
            } else if attempt.errorClass == .timeout || (attempt.errorClass == .network && attempt.isTransient) {
                congestion = .failed
            }
        }
        transferEnded(transfer.job, succeeded: succeeded, latency: latency, congestion: congestion, http1: http1)
        resolve(transfer.job, outcome)
    }

    /// --limit-rate: transfers paused for want of bytes go on once the
    /// bucket is positive again (resuming hands curl's kept bytes to the
    /// write callback at once, which may pause the transfer again).
    private func resumePaused() {
        guard let bandwidth, !bandwidth.paused.isEmpty,
              traffic.secondsUntilBytes(now: Self.seconds()) == 0 else { return }
        let waiting = bandwidth.paused
        bandwidth.paused = []
        for (n, transfer) in waiting.enumerated() {
            guard transfers[transfer.handle] === transfer else { continue }
            imgwarm_easy_resume(transfer.handle)
            if !bandwidth.paused.isEmpty {
                // Out of bytes again: the rest wait, in their order.
                bandwidth.paused += waiting[(n + 1)...].filter { transfers[$0.handle] === $0 }
                break
            }
        }
    }

    /// --memory: transfers paused for want of it go on once bodies were
    /// released (or when one became the oldest holder, which may always grow).
    private func resumeMemoryPaused() {
        guard !memoryPauses.paused.isEmpty else { return }
        let waiting = memoryPauses.paused
        memoryPauses.paused = []
        for transfer in waiting {
            guard transfers[transfer.handle] === transfer else { continue }
            guard transfer.mayResumeForMemory else {
                memoryPauses.paused.append(transfer)
                continue
            }
            transfer.resumingAfterMemoryPause()
            imgwarm_easy_resume(transfer.handle)
        }
    }

    /// Completes the job, or schedules its next attempt.
    private func resolve(_ job: DownloadJob, _ outcome: consuming AttemptOutcome) {
        switch consume outcome {
        case .success(var response):
            response.attempts = job.attempts
            response.elapsed = elapsed(job)
            finish(job, .success(response))
        case .notModified(var response):
            response.attempts = job.attempts
            response.elapsed = elapsed(job)
            finish(job, .notModified(response))
        case .failure(let attempt):
            if attempt.isTransient, attempt.errorClass != .cancelled, policy.allowsRetry(afterAttempts: job.attempts) {
                let delay = policy.delay(afterAttempt: job.attempts, retryAfter: attempt.retryAfter)
                retries.schedule(job, due: Self.now() + UInt64(delay * 1e9))
            } else {
                finish(job, .failure(failure(job, attempt)))
            }
        }
    }

    private func failure(_ job: DownloadJob, _ attempt: AttemptFailure) -> DownloadFailure {
        var failure = DownloadFailure(errorClass: attempt.errorClass, status: attempt.status, message: attempt.message,
                                      isTransient: attempt.isTransient, attempts: job.attempts, elapsed: elapsed(job),
                                      contentType: attempt.contentType)
        failure.diskError = attempt.diskError
        return failure
    }

    private func finish(_ job: DownloadJob, _ result: DownloadResult) {
        jobs.remove(job)
        let callers = job.callers
        job.callers = []
        deliver(callers, result)
    }

    private func deliver(_ callers: [DownloadJob.Completion], _ result: DownloadResult) {
        for completion in callers {
            completion(result)
        }
        completedUnreported += callers.count
    }

    /// Tells the mailbox about the completions run so far; before every
    /// sleep, so that waitUntilIdle never waits on an idle engine.
    private func reportCompleted() {
        guard completedUnreported > 0 else { return }
        mailbox.completed(count: completedUnreported)
        completedUnreported = 0
    }

    /// Aborts transfers in flight, forgets queued and waiting jobs, and
    /// completes every caller with `.cancelled`.
    private func cancelEverything() {
        for (handle, transfer) in transfers {
            curl_multi_remove_handle(multi, handle)
            pool.give(handle)
            traffic.ended(transfer.job.hostKey, succeeded: false, now: Self.seconds())
        }
        // Frees the transfers' buffers, now that no handle points at them.
        transfers = [:]
        hopStarts = [:]
        parkedHops = []
        memoryPauses.paused = []
        bandwidth?.paused = []
        inFlight = 0
        slots.removeAll()
        hostWakeups = [:]
        queue.removeAll()
        retries.removeAll()
        for job in jobs.removeAll() {
            let callers = job.callers
            job.callers = []
            deliver(callers, .failure(Self.cancelledFailure(attempts: job.attempts, elapsed: elapsed(job))))
        }
    }

    private func tearDown() {
        mailbox.detachMulti()
        for handle in transfers.keys {
            curl_multi_remove_handle(multi, handle)
            curl_easy_cleanup(handle)
        }
        transfers = [:]
        hopStarts = [:]
        parkedHops = []
        pool.destroyAll()
        curl_multi_cleanup(multi)
    }

    // MARK: time

    /// Cancellation is never the URL's fault: transient, so callers never
    /// put a cancelled URL on the failed-URL list.
    static func cancelledFailure(attempts: Int, elapsed: Double) -> DownloadFailure {
        DownloadFailure(errorClass: .cancelled, status: nil, message: "cancelled", isTransient: true,
                        attempts: attempts, elapsed: elapsed)
    }

    private func pollTimeout() -> Int32 {
        var ms = Self.idlePollMilliseconds
        let now = Self.now()
        // Round up so we never wake just before the retry is due.
        func until(_ due: UInt64) -> UInt64 { due > now ? (due - now + 999_999) / 1_000_000 : 0 }
        if let due = retries.nextDue { ms = min(ms, until(due)) }
        if let due = hostWakeups.values.min() { ms = min(ms, until(due)) }
        if let due = parkedHops.map(\.due).min() { ms = min(ms, until(due)) }
        // Bodies are released on other threads: look again soon.
        if !memoryPauses.paused.isEmpty { ms = min(ms, 5) }
        if let bandwidth, !bandwidth.paused.isEmpty, let wait = traffic.secondsUntilBytes(now: Self.seconds()) {
            ms = min(ms, UInt64((wait * 1000).rounded(.up)))
        }
        return Int32(ms)
    }

    private func elapsed(_ job: DownloadJob) -> Double {
        guard let start = job.firstStart else { return 0 }
        return Double(Self.now() - start) / 1e9
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A host's adaptive limit at first, per thread: today's `-j 16` split.
    static func initialLimit(loops: Int) -> Int { max(1, 16 / max(1, loops)) }
    /// The same clock in seconds (rates, buckets, limiter rounds).
    static func seconds() -> Double { Double(now()) / 1e9 }
}
