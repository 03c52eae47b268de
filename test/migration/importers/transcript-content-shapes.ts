// Message content shapes and the line OpenClaw 2026.9.6's doctor stores for each: the answers are its own
// (normalizeLoadedFileEntry, run on each entry); test/compat/transcript-content.test.ts re-checks them against it.

type Entry = Record<string, unknown>;

export const TRANSCRIPT_CONTENT_SHAPES: Record<string, { entry: Entry; stored: Entry }> = {
  "assistant string content": {
    entry: {"type":"message","id":"a1","parentId":null,"message":{"role":"assistant","content":"hello","model":"m","provider":"p"}},
    stored: {"type":"message","id":"a1","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"model":"m","provider":"p"}},
  },
  "assistant string content with a compaction replay checkpoint": {
    entry: {"type":"message","message":{"role":"assistant","content":"x","providerReplay":{"type":"anthropic-compaction","replayIndex":0}}},
    stored: {"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"x"}]}},
  },
  "assistant string content with another providerReplay": {
    entry: {"type":"message","message":{"role":"assistant","content":"x","providerReplay":{"type":"other","a":1}}},
    stored: {"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"x"}],"providerReplay":{"type":"other","a":1}}},
  },
  "toolResult string content": {
    entry: {"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":false,"content":"ok"}},
    stored: {"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":false,"content":[{"type":"text","text":"ok"}]}},
  },
  "toolResult lone object content": {
    entry: {"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":false,"content":{"type":"text","text":"ok"}}},
    stored: {"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":false,"content":[{"type":"text","text":"ok"}]}},
  },
  "toolResult array content untouched": {
    entry: {"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":false,"content":[{"type":"text","text":"ok"}]}},
    stored: {"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":false,"content":[{"type":"text","text":"ok"}]}},
  },
  "user string content untouched": {
    entry: {"type":"message","message":{"role":"user","content":"hi"}},
    stored: {"type":"message","message":{"role":"user","content":"hi"}},
  },
  "custom message untouched (customType only for v1/v2 hookMessage)": {
    entry: {"type":"message","message":{"role":"custom","content":"hi"}},
    stored: {"type":"message","message":{"role":"custom","content":"hi"}},
  },
  "assistant empty string": {
    entry: {"type":"message","message":{"role":"assistant","content":""}},
    stored: {"type":"message","message":{"role":"assistant","content":[{"type":"text","text":""}]}},
  },
  "not a message": {
    entry: {"type":"compaction","summary":"s","content":"x"},
    stored: {"type":"compaction","summary":"s","content":"x"},
  },
  "message without an object message": {
    entry: {"type":"message","message":"text"},
    stored: {"type":"message","message":"text"},
  },
};
