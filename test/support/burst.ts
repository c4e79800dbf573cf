// A test server that many clients connect to at once (docs/decisions.md, "Test runs").

/**
 * The listen backlog of a server taking 1,000 connections at once: Node's default (511) queues
 * only about half of them in the kernel while the process is busy, and under CPU load the rest
 * could be reset (ECONNRESET) before the process came back to accept them. Linux caps it at
 * `net.core.somaxconn` (4096 since Linux 5.4).
 */
export const BURST_BACKLOG = 1_024;
