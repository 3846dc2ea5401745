/** Business outcomes every dated document shares. Each has a stable `code`. */

export class DueDateBeforeIssueDateError extends Error {
  readonly code = 'due_date_before_issue_date';
  constructor(issueDate: string, dueDate: string) {
    super(`dueDate ${dueDate} is before issueDate ${issueDate}.`);
  }

  /**
   * @throws DueDateBeforeIssueDateError when the due date (if any) precedes the issue date
   *   (both YYYY-MM-DD, so text order is date order)
   */
  static assertNotBefore(issueDate: string, dueDate: string | null): void {
    if (dueDate !== null && dueDate < issueDate) throw new DueDateBeforeIssueDateError(issueDate, dueDate);
  }
}
