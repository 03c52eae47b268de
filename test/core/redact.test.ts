// Redaction helpers: secret keys, deep redaction, collected values, the scrubber and content-free parse errors.
import { describe, expect, it } from "vitest";
import { collectSecretValues, describeParseError, isSecretKey, REDACTED, redactSecrets, SecretScrubber } from "../../src/core/redact.js";

describe("redact", () => {
  it("knows credential keys and leaves ordinary ones", () => {
    for (const k of ["key", "apiKey", "api_key", "token", "access", "refresh", "accessToken", "refresh_token", "client_secret", "privateKeyPem", "password", "botToken"]) expect(isSecretKey(k), k).toBe(true);
    for (const k of ["sessionKey", "provider", "email", "expires", "type", "mainKey", "id", "keyId"]) expect(isSecretKey(k), k).toBe(false);
  });

  it("redacts deeply, including whole objects under a secret key and PEM private keys anywhere", () => {
    const pem = "-----BEGIN PRIVATE KEY-----\nMIIabc\n-----END PRIVATE KEY-----";
    const input = { profiles: { "a:default": { type: "oauth", access: "at-1", refresh: "rt-1", expires: 5, email: "a@b" } }, credentials: { x: "y" }, list: [{ token: 42 }], other: pem };
    expect(redactSecrets(input)).toEqual({
      profiles: { "a:default": { type: "oauth", access: REDACTED, refresh: REDACTED, expires: 5, email: "a@b" } },
      credentials: REDACTED,
      list: [{ token: REDACTED }],
      other: REDACTED,
    });
    expect(input.profiles["a:default"].access).toBe("at-1");
    expect(collectSecretValues(input).sort()).toEqual(["42", pem, "at-1", "rt-1", "y"].sort());
  });

  it("scrubs known secret values out of text, longest first", () => {
    const scrubber = new SecretScrubber(["sk-live-abcdef", "sk-live-abcdef-longer", "abc"]);
    expect(scrubber.scrub("keys sk-live-abcdef-longer and sk-live-abcdef; abc stays")).toBe(`keys ${REDACTED} and ${REDACTED}; abc stays`);
  });

  it("describes JSON errors by position, never by content", () => {
    for (const text of ['{"key": sk-live-SECRET}', '{"key": "sk-live-SECRET" "x": 1}', '{"key": "sk-live-SECRET"']) {
      let message = "";
      try {
        JSON.parse(text);
      } catch (error) {
        message = describeParseError(error, text);
      }
      expect(message).toMatch(/^invalid JSON/);
      expect(message).not.toContain("SECRET");
    }
    expect(describeParseError(new SyntaxError("Expected ',' or '}' after property value in JSON at position 14"), '{"a": 1,\n "b" 2}')).toBe("invalid JSON at line 2, column 6");
  });
});
