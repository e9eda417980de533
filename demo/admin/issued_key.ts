/**
 * What the create and rotate admin routes answer: the raw key (shown once)
 * and the public view of the new record. Classes so that `ApiSafeResponse`
 * documents them.
 *
 * @module
 */
import { ApiProperty } from "@nestjs/swagger";
import { PublicKeyView } from "./public_key_view.ts";

/** A created or rotated key: the raw key (shown once) and the public view. */
export class IssuedKey {
  /** Record id. */
  @ApiProperty({ example: "0198c5e2-6f1a-7c3e-9a4b-2d1f0e8c7b6a" })
  id!: string;
  /** Raw key; store it now, it is never shown again. */
  @ApiProperty({ description: "The raw key, shown only in this answer" })
  key!: string;
  /** Public view of the new record. */
  @ApiProperty({ type: () => PublicKeyView })
  record!: PublicKeyView;
}

/** A rotation: the new key plus the old key's grace end. */
export class RotatedKey extends IssuedKey {
  /** Id of the rotated key. */
  @ApiProperty()
  replacedKeyId!: string;
  /** When the old key stops working (ISO 8601). */
  @ApiProperty({ type: String, format: "date-time" })
  graceExpiresAt!: string;
}
