// The generated SDK client names the DOM's `BodyInit`, which @types/node does not declare
// globally. The SDK's own tsconfig has the DOM lib; this gives the root program (apps, tests
// that import the SDK from source) the same name, without adding the whole DOM lib there.
type BodyInit = NonNullable<RequestInit['body']>;
