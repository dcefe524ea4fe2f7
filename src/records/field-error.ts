/** One problem with one part of a request, e.g. `{ field: 'items[1].item_weight', message: '...' }`. */
export interface FieldError {
  field: string;
  message: string;
}
