/** The one disposal vocabulary (STYLE.md 5): a subscription, a timer, a resource let go of once. */
export interface Disposable {
  /** Idempotent. */
  dispose(): void;
}
