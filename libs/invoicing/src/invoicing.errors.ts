/** Business outcomes of invoicing use cases. Each has a stable `code`. */

export class OrderAlreadyInvoicedError extends Error {
  readonly code = 'order_already_invoiced';
  constructor(
    readonly orderId: string,
    readonly existingInvoiceId: string,
  ) {
    super(`Order ${orderId} is already invoiced by invoice ${existingInvoiceId}.`);
  }
}

export class InvoiceNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(invoiceId: string) {
    super(`No invoice ${invoiceId} exists.`);
  }
}

export class DueDateBeforeIssueDateError extends Error {
  readonly code = 'due_date_before_issue_date';
  constructor(issueDate: string, dueDate: string) {
    super(`dueDate ${dueDate} is before issueDate ${issueDate}.`);
  }
}
