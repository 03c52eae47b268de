// Legacy route-field shapes and the delivery OpenClaw 2026.9.6's doctor folds each into: the answers are its own
// (normalizeLegacySessionEntryDelivery, run on each entry), and test/compat/legacy-delivery.test.ts re-checks them against it.

type Entry = Record<string, unknown>;

export const LEGACY_DELIVERY_SHAPES: Record<string, { entry: Entry; delivery: unknown }> = {
  "2026.3.28's heartbeat main session: lastTo and deliveryContext.to without a channel, origin.provider cron-event": {
    entry: {"chatType":"direct","deliveryContext":{"to":"heartbeat"},"lastTo":"heartbeat","origin":{"label":"heartbeat","provider":"cron-event","from":"heartbeat","to":"heartbeat"}},
    delivery: {"kind":"external","route":{"channel":"cron-event","target":{"to":"heartbeat"}},"context":{"channel":"cron-event","to":"heartbeat"},"origin":{"label":"heartbeat","provider":"cron-event","from":"heartbeat","to":"heartbeat"}},
  },
  "last* beat deliveryContext and origin": {
    entry: {"deliveryContext":{"channel":"Telegram","to":"+15550001","accountId":"bot1","threadId":42},"lastChannel":"discord","lastTo":"ignored","origin":{"provider":"slack","to":"ignored-too"}},
    delivery: {"kind":"external","route":{"channel":"discord","target":{"to":"ignored"}},"context":{"channel":"discord","to":"ignored"},"origin":{"provider":"slack","to":"ignored-too"}},
  },
  "last* with a thread, no chat type": {
    entry: {"chatType":"group","lastChannel":"discord","lastTo":"channel:g1","lastAccountId":"acct","lastThreadId":"t-7"},
    delivery: {"kind":"external","route":{"channel":"discord","accountId":"acct","target":{"to":"channel:g1"},"thread":{"id":"t-7"}},"context":{"channel":"discord","to":"channel:g1","accountId":"acct","threadId":"t-7"},"origin":{"provider":"discord","to":"channel:g1","accountId":"acct","threadId":"t-7"}},
  },
  "a bare origin, its chat type copied": {
    entry: {"origin":{"provider":"slack","surface":"dm","chatType":"direct","from":"u1","to":"u1","accountId":"ws1"}},
    delivery: {"kind":"external","route":{"channel":"slack","accountId":"ws1","target":{"to":"u1"}},"context":{"channel":"slack","to":"u1","accountId":"ws1"},"origin":{"provider":"slack","surface":"dm","chatType":"direct","from":"u1","to":"u1","accountId":"ws1"}},
  },
  "deliveryContext alone, numeric thread id kept a number": {
    entry: {"deliveryContext":{"channel":"telegram","to":"+15550001","accountId":"bot1","threadId":42.9}},
    delivery: {"kind":"external","route":{"channel":"telegram","accountId":"bot1","target":{"to":"+15550001"},"thread":{"id":42}},"context":{"channel":"telegram","to":"+15550001","accountId":"bot1","threadId":42},"origin":{"provider":"telegram","to":"+15550001","accountId":"bot1","threadId":42}},
  },
  "nothing of a route": {
    entry: {"status":"done","model":"gpt-5"},
    delivery: {"kind":"none"},
  },
  "an internal lastChannel yields to an external deliveryContext": {
    entry: {"lastChannel":"heartbeat","lastTo":"heartbeat","deliveryContext":{"channel":"whatsapp","to":"+4915","accountId":"Work Phone"}},
    delivery: {"kind":"external","route":{"channel":"whatsapp","accountId":"work-phone","target":{"to":"+4915"}},"context":{"channel":"whatsapp","to":"+4915","accountId":"work-phone"},"origin":{"provider":"whatsapp","to":"+4915","accountId":"work-phone"}},
  },
  "webchat is internal": {
    entry: {"lastChannel":"webchat","lastTo":"web-1"},
    delivery: {"kind":"internal"},
  },
  "channel aliases and account ids canonicalized": {
    entry: {"deliveryContext":{"channel":"IMSG","to":"+1","accountId":"  My  Acct!! "}},
    delivery: {"kind":"external","route":{"channel":"imessage","accountId":"my-acct","target":{"to":"+1"}},"context":{"channel":"imessage","to":"+1","accountId":"my-acct"},"origin":{"provider":"imessage","to":"+1","accountId":"my-acct"}},
  },
  "teams and lark aliases": {
    entry: {"lastChannel":"teams","lastTo":"19:abc","origin":{"provider":"lark","to":"ou_1"}},
    delivery: {"kind":"external","route":{"channel":"msteams","target":{"to":"19:abc"}},"context":{"channel":"msteams","to":"19:abc"},"origin":{"provider":"lark","to":"ou_1"}},
  },
  "conflicting channels: nothing mixed from the fallback": {
    entry: {"lastChannel":"discord","lastTo":"d1","deliveryContext":{"channel":"telegram","to":"t1","accountId":"a","threadId":9}},
    delivery: {"kind":"external","route":{"channel":"discord","target":{"to":"d1"}},"context":{"channel":"discord","to":"d1"},"origin":{"provider":"discord","to":"d1"}},
  },
  "conflicting accounts": {
    entry: {"deliveryContext":{"channel":"slack","to":"C1","accountId":"one"},"origin":{"provider":"slack","to":"C2","accountId":"two","threadId":"th"}},
    delivery: {"kind":"external","route":{"channel":"slack","accountId":"one","target":{"to":"C1"}},"context":{"channel":"slack","to":"C1","accountId":"one"},"origin":{"provider":"slack","to":"C2","accountId":"two","threadId":"th"}},
  },
  "the bare channel with last* targets": {
    entry: {"channel":"whatsapp","lastTo":"+33","lastAccountId":"main"},
    delivery: {"kind":"external","route":{"channel":"whatsapp","accountId":"main","target":{"to":"+33"}},"context":{"channel":"whatsapp","to":"+33","accountId":"main"},"origin":{"provider":"whatsapp","to":"+33","accountId":"main"}},
  },
  "a channel without any target": {
    entry: {"channel":"telegram"},
    delivery: {"kind":"external","route":{"channel":"telegram"},"context":{"channel":"telegram"},"origin":{"provider":"telegram"}},
  },
  "an explicit route object leads": {
    entry: {"route":{"channel":"slack","accountId":"T1","target":{"to":"C1","rawTo":"#general","chatType":"channel"},"thread":{"id":5,"kind":"topic","source":"slack"}},"lastChannel":"discord","lastTo":"x"},
    delivery: {"kind":"external","route":{"channel":"slack","accountId":"t1","target":{"to":"C1","rawTo":"#general","chatType":"channel"},"thread":{"id":5,"kind":"topic","source":"slack"}},"context":{"channel":"slack","to":"C1","accountId":"t1","threadId":5},"origin":{"provider":"slack","to":"C1","accountId":"t1","threadId":5,"chatType":"channel"}},
  },
  "an internal route under an external deliveryContext": {
    entry: {"route":{"channel":"cron","target":{"to":"job-1"},"accountId":"acc"},"deliveryContext":{"channel":"signal","to":"+49"}},
    delivery: {"kind":"external","route":{"channel":"signal","accountId":"acc","target":{"to":"+49"}},"context":{"channel":"signal","to":"+49","accountId":"acc"},"origin":{"provider":"signal","to":"+49","accountId":"acc"}},
  },
  "a canonical none recovered from legacy fields": {
    entry: {"delivery":{"kind":"none"},"lastChannel":"telegram","lastTo":"123"},
    delivery: {"kind":"external","route":{"channel":"telegram","target":{"to":"123"}},"context":{"channel":"telegram","to":"123"},"origin":{"provider":"telegram","to":"123"}},
  },
  "a canonical external kept over legacy fields": {
    entry: {"delivery":{"kind":"external","route":{"channel":"slack","target":{"to":"C9"}},"context":{"channel":"slack","to":"C9"},"origin":{"provider":"slack"}},"lastChannel":"telegram","lastTo":"123"},
    delivery: {"kind":"external","route":{"channel":"slack","target":{"to":"C9"}},"context":{"channel":"slack","to":"C9"},"origin":{"provider":"slack"}},
  },
  "deliveryContext that is not an object": {
    entry: {"deliveryContext":"telegram:123","lastTo":"5"},
    delivery: {"kind":"none"},
  },
  "origin with from only and a group chat type": {
    entry: {"origin":{"provider":"discord","from":"user:1","chatType":"group"}},
    delivery: {"kind":"external","route":{"channel":"discord"},"context":{"channel":"discord"},"origin":{"provider":"discord","from":"user:1","chatType":"group"}},
  },
  "lastThreadId alone borrows the origin channel": {
    entry: {"lastThreadId":77,"origin":{"provider":"telegram","to":"-100","threadId":1}},
    delivery: {"kind":"external","route":{"channel":"telegram","target":{"to":"-100"},"thread":{"id":1}},"context":{"channel":"telegram","to":"-100","threadId":1},"origin":{"provider":"telegram","to":"-100","threadId":1}},
  },
  "blocked and empty account ids": {
    entry: {"deliveryContext":{"channel":"slack","to":"C1","accountId":"__proto__"},"lastAccountId":"   "},
    delivery: {"kind":"external","route":{"channel":"slack","target":{"to":"C1"}},"context":{"channel":"slack","to":"C1"},"origin":{"provider":"slack","to":"C1"}},
  },
};
