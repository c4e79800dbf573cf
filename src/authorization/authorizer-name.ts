/**
 * The name an authorizer goes by in the decision record: its OWN string data property `name`,
 * read as a descriptor, so no getter runs (an inherited name, a getter, a non-string, or a proxy
 * whose trap throws give none).
 */
export function authorizerName(authorizer: object): string | undefined {
  try {
    const name = Reflect.getOwnPropertyDescriptor(authorizer, 'name');
    return name !== undefined && typeof name.value === 'string' ? name.value : undefined;
  } catch {
    return undefined;
  }
}
