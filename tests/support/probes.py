"""Scripts a test runs in a replayed page to try to reach the outside world."""

# WebRTC sends UDP around resolver rules and any proxy: STUN to an IP literal, mDNS to 224.0.0.251, its own DNS
# for a STUN host. The script returns the ICE candidates it gathered: none when WebRTC may not send UDP.
WEBRTC = """async () => {
    const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:192.0.2.1:3478'}, {urls: 'stun:stun.example.org'}]});
    pc.createDataChannel('probe');
    const candidates = [];
    pc.onicecandidate = e => { if (e.candidate) candidates.push(e.candidate.candidate); };
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise(r => setTimeout(r, 2500));
    pc.close();
    return candidates;
}"""

# A WebSocket to the URL given: resolves to "open", "error" (the connection failed) or "timeout" after 10 s.
WEBSOCKET = """(url) => new Promise(resolve => {
    const socket = new WebSocket(url);
    socket.onopen = () => { socket.close(); resolve('open'); };
    socket.onerror = () => resolve('error');
    setTimeout(() => resolve('timeout'), 10000);
})"""
